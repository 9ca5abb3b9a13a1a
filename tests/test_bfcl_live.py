"""BFCL live: the shipped file is the one its provenance names, split by the rule written before measuring,
and each request becomes a one-step scenario over its own catalog."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.eval.bfcl_live import SPLITS, live_scenario, load_bfcl_live, search_each
from toolsearch_lab.eval.scenarios import run_scenario
from toolsearch_lab.index.factory import make_index


@pytest.fixture(scope="module")
def requests():
    return load_bfcl_live()


def test_the_file_is_the_one_its_provenance_names(requests):
    provenance = data_path("bfcl-live", "PROVENANCE.md").read_text(encoding="utf-8")
    digest = hashlib.sha256(data_path("bfcl-live", "requests.json").read_bytes()).hexdigest()
    assert re.search(rf"^{digest}  requests.json$", provenance, re.MULTILINE)
    assert "HELD OUT" in provenance
    categories = Counter(r.category for r in requests)
    assert len(requests) == 2244 and categories["irrelevance"] == 879 and categories["simple"] == 258
    assert {len(r.tools) for r in requests} == set(range(1, 13)) - {11}
    assert all(r.servable == (r.category != "irrelevance") for r in requests)
    assert all(set(r.relevant) <= {t.name for t in r.tools} for r in requests)


def test_the_split_is_the_rule_written_down_and_a_catalog_sits_in_one_half(requests):
    raw = json.loads(data_path("bfcl-live", "requests.json").read_text(encoding="utf-8"))
    for key, tools in raw["catalogs"].items():
        canonical = json.dumps(sorted(tools, key=lambda t: t["name"]), sort_keys=True, ensure_ascii=False)
        assert hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12] == key
    halves = {split: load_bfcl_live(split) for split in SPLITS}
    assert sum(len(h) for h in halves.values()) == len(requests)
    for split, found in halves.items():
        even = split == "choice"
        assert all(r.split == split and (int(r.catalog[0], 16) % 2 == 0) == even for r in found)
    assert not {r.catalog for r in halves["choice"]} & {r.catalog for r in halves["held-out"]}
    with pytest.raises(ValueError, match="unknown BFCL live split 'test'"):
        load_bfcl_live("test")


def test_a_request_is_a_one_step_scenario_over_its_own_catalog(requests):
    servable = next(r for r in requests if r.id == "live_simple_43-17-3")  # "set cool mode with a temp ..."
    scenario = live_scenario(servable)
    assert [t.name for t in scenario.tools] == ["ThinQ_Connect"] and scenario.wording == "user"
    assert scenario.steps[0].expected_tools == ("ThinQ_Connect",) and scenario.user_request == servable.query
    run = run_scenario(scenario, "hybrid", False, "semantic", index_options={"abstain": False})
    assert run.grade.success and run.trace.called_tools() == ["ThinQ_Connect"]
    unservable = next(r for r in requests if r.id == "live_irrelevance_3-0-3")  # "... play game doom."
    step = live_scenario(unservable).steps[0]
    assert not step.servable and unservable.tools[0].name == "requests.get"


def test_each_request_is_searched_over_its_own_catalog(requests):
    some = [r for r in requests if r.category == "multiple"][:12]
    responses = search_each(make_index("lucene"), some, depth=3)
    assert len(responses) == len(some)
    for request, response in zip(some, responses, strict=True):
        assert set(response.tool_names) <= {t.name for t in request.tools} and len(response.tool_names) <= 3


def test_the_halves_are_what_the_docs_say(requests):
    """The two halves' make-up that docs/index.md and the provenance quote."""
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "index.md").read_text("utf-8").split())
    provenance = " ".join(data_path("bfcl-live", "PROVENANCE.md").read_text("utf-8").split())
    counts = {}
    for split in SPLITS:
        found = [r for r in requests if r.split == split]
        one = [r for r in found if len(r.tools) == 1]
        counts[split] = (sum(not r.servable for r in one), len(one))
        on, off = sum(r.servable for r in found), sum(not r.servable for r in found)
        assert f"({len(found):,} requests: {on} servable, {off} unservable)" in provenance
    (a, b), (c, d) = counts["held-out"], counts["choice"]
    assert f"({a} of {b} against {c} of {d})" in text
