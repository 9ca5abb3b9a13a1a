"""The stop-word lists, one per analyzer that drops stop words, each defined once.

* :data:`SPRING_REGEX_STOP_WORDS` - Spring AI's ``RegexToolSearcher`` list, exact (spec §3.2; 95 words,
  although the spec's prose says 81). Dropped from keyword-mode queries before they become a pattern.
* :data:`ENGLISH_STOP_WORDS` - the 318-word Glasgow list that scikit-learn ships as ``ENGLISH_STOP_WORDS``,
  copied here so the text layer does not import scikit-learn; the hybrid index drops these from the BM25
  query. ``tests/test_text_normalise.py`` checks the copy against scikit-learn's.
* :data:`AGENT_STOP_WORDS` - the simulated agent's list: Spring's core words plus the request verbs a user
  types ("please find", "show me") that say nothing about which tool fits.

Lucene's ``StandardAnalyzer`` (and so the BM25 index without options) has an empty stop set.
"""

from __future__ import annotations

import re

__all__ = ["AGENT_STOP_WORDS", "ENGLISH_STOP_WORDS", "SPRING_REGEX_STOP_WORDS", "strip_stop_words"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


SPRING_REGEX_STOP_WORDS: frozenset[str] = _words(
    """
    a an the is are was were be been being have has had do does did will would could should may might
    must shall can need dare ought used to of in for on with at by from as into through during before
    after above below between and or but if because until while although this that these those what
    which who whom whose i me my we our you your he him his she her it its they them their all any both
    each every some no not only just also very too so
    """
)

ENGLISH_STOP_WORDS: frozenset[str] = _words(
    """
    a about above across after afterwards again against all almost alone along already also although
    always am among amongst amoungst amount an and another any anyhow anyone anything anyway anywhere
    are around as at back be became because become becomes becoming been before beforehand behind being
    below beside besides between beyond bill both bottom but by call can cannot cant co con could
    couldnt cry de describe detail do done down due during each eg eight either eleven else elsewhere
    empty enough etc even ever every everyone everything everywhere except few fifteen fifty fill find
    fire first five for former formerly forty found four from front full further get give go had has
    hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter latterly least
    less ltd made many may me meanwhile might mill mine more moreover most mostly move much must my
    myself name namely neither never nevertheless next nine no nobody none noone nor not nothing now
    nowhere of off often on once one only onto or other others otherwise our ours ourselves out over own
    part per perhaps please put rather re same see seem seemed seeming seems serious several she should
    show side since sincere six sixty so some somehow someone something sometime sometimes somewhere
    still such system take ten than that the their them themselves then thence there thereafter thereby
    therefore therein thereupon these they thick thin third this those though three through throughout
    thru thus to together too top toward towards twelve twenty two un under until up upon us very via
    was we well were what whatever when whence whenever where whereafter whereas whereby wherein
    whereupon wherever whether which while whither who whoever whole whom whose why will with within
    without would yet you your yours yourself yourselves
    """
)

AGENT_STOP_WORDS: frozenset[str] = _words(
    """
    a an the is are was were be been being have has had do does did will would could should may might
    must shall can need to of in for on with at by from as into through and or but if then than so that
    this these those what which who whom whose it its i me my we our you your he she they them their all
    any each some no not only just also very too please now use using get find tell show give want let
    up out about there here given
    """
)


_WORD = re.compile(r"\S+")
_PUNCT = ".,!?;:\"'()[]{}<>`*"


def strip_stop_words(query: str) -> str:
    """The query without :data:`ENGLISH_STOP_WORDS`, for a keyword index whose analyzer keeps them
    (Lucene's StandardAnalyzer, so Spring's BM25). A query made only of stop words is kept as is, so it
    can still match something."""
    kept = [w for w in _WORD.findall(query) if w.lower().strip(_PUNCT) not in ENGLISH_STOP_WORDS]
    return " ".join(kept) if kept else query
