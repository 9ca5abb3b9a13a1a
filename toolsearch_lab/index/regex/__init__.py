"""RegexToolIndex: Spring AI's keyword-regex tool index, ported faithfully (spec §3), plus an
Anthropic-style "pattern" mode where the query *is* a regular expression.

Keyword mode (default, ``mode="keywords"``) reproduces Spring exactly:

* the query is lower-cased like Java's ``toLowerCase(Locale.ROOT)``, split on ``[\\s,;:.!?()\\[\\]{}"']+``
  (ASCII ``\\s``), trimmed like ``String.trim`` (code points <= U+0020), filtered (stop words, length < 2,
  with an unfiltered fallback pass), escaped with Spring's own escaping (not ``re.escape``), de-duplicated and
  OR-ed into ``(?i)(a|b|c)``; the pattern is capped at 200 UTF-16 units by dropping trailing tokens;
* matching is ASCII-only case-insensitive (Java's ``(?i)`` without UNICODE_CASE), Java ``find()`` loop
  semantics (after an empty match the search resumes one character later), and Java's ``.`` (which does not
  match ``\\r``, U+0085, U+2028 or U+2029 either);
* score = name ``2*count + 1/(1 + 0.1*p)`` + description ``1*count + 0.5/(1 + 0.1*p)``, where ``p`` is the
  first hit's UTF-16 offset, like Java's ``Matcher.start()``; stable sort, descending.

How it stays fast (the same scores as Spring's linear scan, to the last bit): the query's tokens never
contain a delimiter, so no hit can cross one. At the first search after a change, a session cuts every name
and description into delimiter-free "chunks" and keeps a vocabulary of the distinct chunks (ASCII-folded,
with a trigram index) and a list of where each occurs. A search finds the chunks that contain a token,
counts Java's hits in each of those chunks once, and adds them up per text with numpy. A blank query
(``.*``) is counted from line terminators. A pattern that is not an alternation of literals (only reachable
by overriding ``convert_query_to_regex_pattern``) is matched tool by tool, as Spring does. The vocabulary
costs a few seconds and some tens of MB at 100,000 tools, once per change of the session's tools
(``benchmarks/search_speed.py`` measures both).

Documented deviations from Spring:

* ``max_results`` < 1 or not an int raises ``ValueError`` (``SearchRequest`` checks it); a query that is not
  a string (or None) raises ``TypeError``.
* ``category_filter`` is honoured for tools that carry a category; uncategorised tools are always kept, so for
  catalogs without categories it has no effect, as in Spring.
* ``search_time_ms`` is a float with microsecond resolution (Spring: whole milliseconds).

Pattern mode (``mode="pattern"``) follows Anthropic's regex tool search: the query is a Python ``re`` pattern
of at most 200 characters, matched against the tool name, description, parameter names and parameter
descriptions (nested ``properties``/``items`` too). Case: Anthropic's documentation gives ``"(?i)slack"`` as
the way to search case-insensitively and says "searches are case-sensitive by default (use ``(?i)`` for
case-insensitive)" (platform.claude.com, "Tool search tool", 2025 and 2026 versions); ``case_sensitive=True``
reproduces that, and the ``anthropic-regex`` strategy uses it. Without it, pattern mode matches
case-insensitively (Unicode), the more forgiving choice for exploring a catalog by hand. Matching runs on the
``regex`` package with timeouts, so catastrophic backtracking cannot hang a search: each match call may take
at most ``pattern_call_timeout_s`` (default 50 ms), and one whole search at most ``pattern_budget_s`` (default
1 s). A text whose match times out is tried again (with the rest of the budget if the try was mostly waiting,
else at twice and four times the timeout), so only a pattern that times out on every try is refused. Each
distinct text is matched once however many tools share it, and literal text that every match must contain
(``email``; ``get_`` and ``issue`` in ``get_.*issue``; ``send`` or ``post`` in ``send|post``) is looked up in
the session's chunk vocabulary first, so only the texts that contain it are matched. A pattern without such
text (``^\\w+$``) is matched against every text, which at 100,000 tools takes longer than the budget; the
error then says whether the catalog's size or the pattern is the cost. Patterns whose counted repeats would
expand to more than 10,000 elements (``(((a{999}){999}){999})`` exhausts memory inside ``regex.compile``) are
refused before compiling. Problems are raised as ``PatternError`` (a ``ValueError``; timeouts as its subclass
``PatternTimeoutError``) with a message naming the problem, for the meta-tool to hand back to the model, and
its ``kind`` (``PatternProblem``: empty, too long, invalid, too complex, timeout) for code to branch on.
Scoring reuses the formula above plus a parameter part counted like description hits, ``1*count + 0.5/(1 +
0.1*p)``, with ``count`` summed over all parameter texts and ``p`` the smallest first-hit offset among them.

Known limits of the Java parity: the final-sigma rule of ``toLowerCase`` depends on Java's word
BreakIterator, which :func:`~toolsearch_lab.text.java.java_root_lower` approximates (exact for ordinary
text; differs on contrived mixes of marks, surrogates and punctuation). Patterns returned by an overridden
``convert_query_to_regex_pattern`` only get Java's ``.`` translated; Java-only syntax (``\\Q..\\E``,
Unicode-aware ``\\b``) is not, and empty matches inside astral characters are counted per code point, not
per UTF-16 unit.

Where each part lives: :mod:`.index` (the index: sessions, search, ranking, explanations),
:mod:`.keywords` (Spring's query-to-pattern conversion and keyword scoring), :mod:`.pattern` (pattern
mode: checking, required literals, timed matching, scoring), :mod:`.corpus` (a session's tools and each
mode's corpus), :mod:`.vocabulary` (chunks, trigrams, occurrences); how Java handles text (UTF-16 offsets,
lower-casing, ``.``, the ``find()`` loop, Spring's escaping) is :mod:`toolsearch_lab.text.java`.
"""

from toolsearch_lab.index.regex.index import MODES, MatchSpan, RegexDetails, RegexToolIndex
from toolsearch_lab.index.regex.keywords import MATCH_ALL, MAX_PATTERN_LENGTH, STOP_WORDS
from toolsearch_lab.index.regex.pattern import PatternError, PatternProblem, PatternTimeoutError
from toolsearch_lab.text.java import java_root_lower, spring_escape

__all__ = [
    "MATCH_ALL",
    "MAX_PATTERN_LENGTH",
    "MODES",
    "STOP_WORDS",
    "MatchSpan",
    "PatternError",
    "PatternProblem",
    "PatternTimeoutError",
    "RegexDetails",
    "RegexToolIndex",
    "java_root_lower",
    "spring_escape",
]
