"""Spec §15 items 74-80 (the configuration layer) for ToolSearchConfig.from_spring_properties."""

from datetime import timedelta

import pytest

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.config import PREFIX, ToolSearchConfig, parse_duration
from toolsearch_lab.session.eviction import CompositeEviction, LruEviction, TtlEviction


def props(**kv):
    return {PREFIX + k.replace("__", ".").replace("_", "-"): v for k, v in kv.items()}


def test_item74_disabled_by_default():
    assert ToolSearchConfig().enabled is False
    assert ToolSearchConfig.from_spring_properties({}).enabled is False
    assert ToolSearchConfig.from_spring_properties(props(enabled="true")).enabled is True


def test_item75_regex_by_default():
    config = ToolSearchConfig.from_spring_properties(props(enabled="true"))
    assert config.index_type == "regex"
    assert isinstance(config.build_index(), RegexToolIndex)


def test_item76_lucene_selected_case_insensitively_with_threshold():
    config = ToolSearchConfig.from_spring_properties(
        props(tool_index_type="LUCENE", lucene__min_score_threshold="0.5")
    )
    index = config.build_index()
    assert isinstance(index, BM25ToolIndex) and index.min_score_threshold == pytest.approx(0.5)


def test_item77_vector_needs_no_store_here():
    # Spring fails at startup without a VectorStore bean; our vector index brings its own offline store
    # (numpy) and embedder (MiniLM), so the property alone is enough.
    assert ToolSearchConfig.from_spring_properties(props(tool_index_type="vector")).index_type == "vector"


def test_item78_unknown_type_only_warns():
    with pytest.warns(UserWarning, match="not one of"):
        config = ToolSearchConfig.from_spring_properties(props(tool_index_type="elastic"))
    assert config.index_type == "regex"


def test_item79_user_supplied_index_wins():
    mine = BM25ToolIndex(min_score_threshold=0.0)
    advisor = ToolSearchConfig(index_type="regex").build_advisor(index=mine)
    assert advisor.index is mine


def test_item80_ttl_gives_composite_of_lru_and_ttl():
    plain = ToolSearchConfig.from_spring_properties(props(eviction__lru_max_sessions="7")).eviction()
    assert isinstance(plain, LruEviction) and plain.max_sessions == 7
    composite = ToolSearchConfig.from_spring_properties(props(eviction__ttl="10m")).eviction()
    assert isinstance(composite, CompositeEviction)
    lru, ttl = composite.strategies
    assert isinstance(lru, LruEviction) and lru.max_sessions == 1000
    assert isinstance(ttl, TtlEviction) and ttl.ttl == 600


def test_all_advisor_properties_reach_the_advisor():
    config = ToolSearchConfig.from_spring_properties(
        props(
            max_results="5",
            system_message_suffix="\nUse toolSearchTool.",
            reference_tool_name_accumulation="false",
            session_id_key_name="conversationId",
        )
    )
    advisor = config.build_advisor(index=RegexToolIndex())
    assert advisor.settings.max_results == 5
    assert advisor.settings.system_message_suffix == "\nUse toolSearchTool."
    assert advisor.accumulation is False
    assert advisor.settings.session_id_key == "conversationId"


def test_relaxed_binding_and_foreign_keys():
    config = ToolSearchConfig.from_spring_properties(
        {PREFIX + "maxResults": 3, PREFIX + "tool_index_type": "lucene", "server.port": "8080"}
    )
    assert (config.max_results, config.index_type) == (3, "lucene")


@pytest.mark.parametrize(
    "key, value, fragment",
    [
        ("max-results", "many", "max-results must be an integer"),
        ("enabled", "yes", "enabled must be true or false"),
        ("eviction.ttl", "ten minutes", "eviction.ttl must be a duration"),
        ("eviction.ttl", "0s", "ttl must be positive"),
        ("eviction.lru-max-sessions", "0", "eviction.lru-max-sessions must be a positive integer, got 0"),
        ("lucene.min-score-threshold", "high", "must be a number"),
        ("maxResult", "3", "unknown Spring property"),
    ],
)
def test_bad_properties_name_the_property(key, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        ToolSearchConfig.from_spring_properties({PREFIX + key: value})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("10m", timedelta(minutes=10)),
        ("30s", timedelta(seconds=30)),
        ("1h", timedelta(hours=1)),
        ("500", timedelta(milliseconds=500)),
        ("250ms", timedelta(milliseconds=250)),
        ("PT10M", timedelta(minutes=10)),
        ("P1DT2H", timedelta(days=1, hours=2)),
    ],
)
def test_spring_durations(text, expected):
    assert parse_duration(text) == expected
