import pytest

from toolsearch_lab.eval.scaling import catalog_of, distractor_pool, measure_index
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.model import Tool

TARGET = Tool("currentTime", "Provides the current date and time (as date-time string) for a given location")


def test_catalog_of_hides_targets_among_unique_real_distractors():
    pool = distractor_pool(exclude={"currentTime"})
    assert len(pool) == 823  # 117 + 510 + 199 tools, 3 names shared between catalogs kept once
    tools = catalog_of(2000, [TARGET], pool)
    assert len(tools) == 2000 and tools[0] is TARGET
    assert len({t.name for t in tools}) == 2000
    assert tools[1] is pool[0] and tools[len(pool) + 1].name.startswith(pool[0].name[:20])
    assert catalog_of(2000, [TARGET], pool) == tools  # deterministic


def test_catalog_of_rejects_impossible_sizes():
    with pytest.raises(ValueError, match="smaller than the 1 target"):
        catalog_of(0, [TARGET], [TARGET])
    with pytest.raises(ValueError, match="pool is empty"):
        catalog_of(5, [TARGET], [])


def test_measure_index_reports_rank_or_none():
    tools = catalog_of(300, [TARGET], distractor_pool(exclude={"currentTime"}))
    row = measure_index(BM25ToolIndex(), tools, {"currentTime": "current date and time", "nothing": "zzqx"})
    assert row["ranks"] == {"currentTime": 1, "nothing": None}
    assert row["search_ms"] >= 0 and row["index_s"] >= 0
