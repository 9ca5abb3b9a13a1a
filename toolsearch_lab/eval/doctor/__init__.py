"""The catalog doctor: will tool search work on *your* tools, and what should you fix first?

``diagnose(catalog)`` checks any catalog the project can load and returns a :class:`DoctorReport` (plain
data, JSON round-trip):

* **cost**: exact tokens per tool and per request (per encoding) and why the heaviest tools are heavy;
* **findability**: queries made from each tool's own text and queries written the way users ask (without
  the name's words), searched with each index; tools none of them finds in the top k, and the range of
  plain requests to expect in the top k (``report.findable_range``);
* **confusable pairs**: tools whose queries the indexes answer with the other one, with the words that
  differ (description cosine shown, never a reason by itself);
* **description quality**: blank or thin descriptions, undocumented parameters, copy-pasted descriptions,
  docstring sections leaking in, names that collide across servers or break a provider's name rules;
* **payoff**: the tokens and the bill (with prompt caching) of a typical task with and without tool search,
  a verdict that says no when the saving is small (``doctor.payoff``), and a recommendation (index,
  maxResults, accumulation) with the reason.

Every finding names the tool, says what is wrong and what to change; findings are ranked by impact.
``toolsearch-lab doctor CATALOG`` prints the same report; ``toolsearch_lab.ui.doctor.CatalogDoctor`` draws it.
"""

from toolsearch_lab.eval.doctor.engine import DEFAULT_INDEXES, diagnose, rank_findings
from toolsearch_lab.eval.doctor.findability import derive_probes, first_sentence
from toolsearch_lab.eval.doctor.report import (
    DESCRIPTION_KINDS,
    SEVERITIES,
    ConfusablePair,
    CostReport,
    DoctorReport,
    Finding,
    IndexScore,
    Payoff,
    QueryRank,
    Recommendation,
    ToolCost,
    ToolFindability,
)

__all__ = [
    "DEFAULT_INDEXES",
    "DESCRIPTION_KINDS",
    "SEVERITIES",
    "ConfusablePair",
    "CostReport",
    "DoctorReport",
    "Finding",
    "IndexScore",
    "Payoff",
    "QueryRank",
    "Recommendation",
    "ToolCost",
    "ToolFindability",
    "derive_probes",
    "diagnose",
    "first_sentence",
    "rank_findings",
]
