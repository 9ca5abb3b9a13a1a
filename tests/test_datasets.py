"""Dataset loading: shipped datasets, and malformed files rejected with messages naming the entry."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.eval.datasets import Dataset, DatasetError, Query, load_dataset, parse_dataset


def good_doc() -> dict:
    return {
        "source": "test",
        "tools": [
            {
                "name": "weather",
                "description": "Weather forecast",
                "parameters": {"type": "object", "properties": {}},
            },
            {"name": "email", "description": "Send email", "category": "comms"},
        ],
        "queries": [
            {"id": "q1", "query": "will it rain", "relevant_tools": ["weather"]},
            {"query": "mail Bob", "relevant_tools": ["email", "email"]},
        ],
    }


def write(tmp_path, doc, name="tiny.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.slow
def test_shipped_datasets():
    meta = load_dataset("metatool")
    assert (len(meta.tools), len(meta.queries), meta.name) == (199, 21111, "metatool")
    names = set(meta.tool_names)
    assert "PDF_URLTool" in names and "PDF&URLTool" not in names  # same rename as the shipped catalog
    assert all(set(q.relevant_tools) <= names for q in meta.queries)
    live = load_dataset("livemcpbench")
    assert (len(live.tools), len(live.queries)) == (510, 94)
    assert live.queries[0].id == "0e3287cb-c0ff-4d2a-8c3d-d8833014a7b0"
    assert live.tools[0].category  # categories come from the shipped catalog


def test_load_file(tmp_path):
    ds = load_dataset(write(tmp_path, good_doc()))
    assert isinstance(ds, Dataset) and ds.name == "tiny"
    assert ds.queries == [Query("q1", "will it rain", ("weather",)), Query("1", "mail Bob", ("email",))]
    assert ds.tools[1].category == "comms"
    assert ds.subset(1).queries[0] in ds.queries


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d["queries"][0].update(relevant_tools=["nope"]),
            r"queries\[0\] \(id 'q1'\): unknown relevant tool\(s\) 'nope'",
        ),
        (
            lambda d: d["tools"].append({"name": "weather", "description": "again"}),
            r"tools\[2\] 'weather': duplicate tool name",
        ),
        (lambda d: d["tools"][0].pop("description"), r"tools\[0\] 'weather': missing 'description'"),
        (lambda d: d["queries"][1].pop("query"), r"queries\[1\]: missing field 'query'"),
        (lambda d: d["queries"][1].pop("relevant_tools"), r"queries\[1\]: missing field 'relevant_tools'"),
        (
            lambda d: d["queries"][0].update(relevant_tools="weather"),
            r"'relevant_tools' must be a non-empty list",
        ),
        (lambda d: d["queries"][0].update(query=7), r"'query' must be a non-empty string"),
        (
            lambda d: d["tools"][1].update(description=3),
            r"tools\[1\] 'email': 'description' must be a string",
        ),
        (
            lambda d: d["tools"][0].update(parameters={"type": "array"}),
            r"tools\[0\] 'weather'.*\"type\": \"object\"",
        ),
        (lambda d: d.update(tools={}), r"field 'tools' must be a list"),
        (lambda d: d.pop("queries"), r"missing top-level field 'queries'"),
        (lambda d: d["queries"][1].update(id="q1"), r"duplicate query id 'q1'"),
    ],
)
def test_malformed_entries_are_named(tmp_path, mutate, message):
    doc = good_doc()
    mutate(doc)
    with pytest.raises(DatasetError, match=message):
        load_dataset(write(tmp_path, doc))


def test_non_strict_reports_every_problem(tmp_path):
    doc = good_doc()
    doc["tools"].append({"name": "weather", "description": "dup"})
    doc["tools"].append({"name": "bad name!", "description": "x"})
    doc["queries"].append({"query": "x", "relevant_tools": ["ghost"]})
    doc["queries"].append({"query": "", "relevant_tools": ["weather"]})
    ds = load_dataset(write(tmp_path, doc), strict=False)
    assert len(ds.tools) == 2 and len(ds.queries) == 2
    assert len(ds.problems) == 4
    joined = "\n".join(ds.problems)
    assert "duplicate tool name" in joined and "'bad name!'" in joined and "'ghost'" in joined
    assert "problems" in repr(ds)


def test_unknown_name_and_bad_json(tmp_path):
    with pytest.raises(DatasetError, match="'metatool', 'livemcpbench'"):
        load_dataset("no-such-dataset")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError, match="invalid JSON at line 1 column 2"):
        load_dataset(bad)
    with pytest.raises(DatasetError, match="expected a JSON object"):
        parse_dataset([1, 2])


def test_a_dataset_nested_too_deep_is_refused_with_the_limit(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    with pytest.raises(DatasetError, match="nested 5000 levels deep; the limit is"):
        load_dataset(deep)
