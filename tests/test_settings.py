"""The advisor's settings: one frozen value, checked once when it is made, trusted by the advisor and the
meta-tool, made from the advisor's keywords or from Spring Boot properties."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.config import PREFIX, ToolSearchConfig
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.loop.settings import DEFAULT_SETTINGS, AdvisorSettings, SettingError
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall


@pytest.mark.parametrize(
    "setting, value, expected",
    [
        ("max_results", 0, "must be a positive integer or None, got 0"),
        ("max_results", True, "must be a positive integer or None, got True"),
        ("system_message_suffix", "  ", "must be non-blank text, got '  '"),
        ("reference_tool_name_accumulation", "yes", "must be True, False or None, got 'yes'"),
        ("session_id_key", None, "must be non-blank text, got None"),
        ("max_calls_per_tool", 1.5, "must be a positive integer, got 1.5"),
        ("max_total_tool_calls", -1, "must be a positive integer, got -1"),
        ("strict", 1, "must be True or False, got 1"),
        ("max_repeated_searches", 0, "must be a positive integer, got 0"),
        ("max_tool_result_chars", None, "must be a positive integer, got None"),
        ("enforce_max_results_range", "no", "must be True or False, got 'no'"),
        ("protect_running_sessions", None, "must be True or False, got None"),
        ("destructive", "hide", "must be one of 'include', 'exclude', 'ask', got 'hide'"),
        ("accumulation_source", "memory", "must be one of 'session', 'history', got 'memory'"),
        ("tool_timeout", float("inf"), "must be seconds > 0 or None, got inf"),
    ],
)
def test_a_bad_setting_is_refused_naming_it_and_what_was_expected(setting, value, expected):
    with pytest.raises(SettingError, match="^AdvisorSettings." + setting) as info:
        AdvisorSettings(**{setting: value})
    assert (info.value.setting, info.value.problem[: len(expected)]) == (setting, expected)
    with pytest.raises(SettingError, match=f"^AdvisorSettings.{setting} must be"):
        ToolSearchAdvisor(RegexToolIndex(), **{setting: value})
    with pytest.raises(SettingError, match=f"^ToolSearchConfig.{setting} must be"):
        ToolSearchConfig(**{setting: value})


def test_the_advisor_keywords_are_the_settings_with_the_same_defaults():
    parameters = inspect.signature(ToolSearchAdvisor).parameters
    for field in dataclasses.fields(AdvisorSettings):
        assert parameters[field.name].default == field.default, field.name
    assert ToolSearchAdvisor(RegexToolIndex()).settings == DEFAULT_SETTINGS


def test_settings_made_before_are_taken_as_they_are_and_not_beside_keywords():
    settings = AdvisorSettings(max_results=3, strict=True)
    advisor = ToolSearchAdvisor(RegexToolIndex(), settings=settings)
    assert advisor.settings is settings and advisor.search_tool.settings is settings
    with pytest.raises(ValueError, match=r"give settings= or the settings \['max_results', 'tool_timeout'\]"):
        ToolSearchAdvisor(RegexToolIndex(), settings=settings, max_results=5, tool_timeout=None)
    with pytest.raises(TypeError, match="settings must be an AdvisorSettings"):
        ToolSearchAdvisor(RegexToolIndex(), settings={"max_results": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"e.g. AdvisorSettings\(max_results=3\), got int"):
        ToolSearchTool(RegexToolIndex(), 3)  # type: ignore[arg-type]


def test_a_config_is_the_advisors_settings_and_the_advisor_takes_it_whole():
    config = ToolSearchConfig.from_spring_properties({PREFIX + "max-results": "4"})
    advisor = config.with_options(tool_timeout=5, destructive="ask").build_advisor()
    assert isinstance(advisor.settings, ToolSearchConfig)
    assert (advisor.settings.max_results, advisor.settings.destructive) == (4, "ask")
    assert advisor.config_summary()["tool_timeout_s"] == 5.0  # seconds, one spelling from the start
    with pytest.raises(
        ValueError, match=PREFIX.replace(".", r"\.") + r"session-id-key-name must be non-blank"
    ):
        ToolSearchConfig.from_spring_properties({PREFIX + "session-id-key-name": " "})


def test_the_meta_tool_reads_the_settings_it_is_given():
    index = RegexToolIndex()
    index.index_tools("s", [Tool(f"dataTool{i}", "Reads data") for i in range(8)])
    tool = ToolSearchTool(index, AdvisorSettings(max_results=2))
    assert "at most 2 names" in tool.definition()["function"]["description"]
    assert len(json.loads(tool.call({"query": "data"}, "s").result)) == 2
    advisor = ToolSearchAdvisor(index, settings=AdvisorSettings(max_results=2))
    search = ToolCall("c1", "toolSearchTool", json.dumps({"query": "data"}))
    model = ScriptedModel([AssistantTurn(None, [search]), AssistantTurn("done")])
    trace = advisor.run(model, [{"role": "user", "content": "data"}], [], session_id="s").trace
    assert trace.searches()[0].max_results == 2 and trace.config["max_results"] == 2
