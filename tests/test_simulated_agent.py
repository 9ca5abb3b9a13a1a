"""The simulated agents: the semantic one (meaning + word overlap, reformulates, skips and carries on) and
the literal one kept for comparison. Unit tests use a tiny offline embedder whose axes are concepts, so
paraphrases meet without shared words; one test drives the real default embedder (MiniLM)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolsearch_lab.eval.scenarios import run_scenario, scenario_from_dict
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.vector import VectorToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool
from toolsearch_lab.models.factory import MODEL_NAMES, make_model
from toolsearch_lab.models.fit import semantic_fit
from toolsearch_lab.models.glossary import Glossary
from toolsearch_lab.models.openai import ModelNotConfigured
from toolsearch_lab.models.simulated import LiteralAgent, SemanticAgent, SimulatedAgent

# What the unit tests' agent knows of everyday words (the shipped glossary is tested on its own).
GLOSSARY = Glossary.from_entries([(["pr"], ["pull request"]), (["ticket"], ["issue"])])


class ConceptEmbedder:
    """One axis per concept; a text's vector counts the concept words in it (synonyms share an axis)."""

    name = "concepts-test"
    concepts = (
        ("pull", "request", "merge", "land"),
        ("release", "version", "shipped"),
        ("weather", "rain", "soaked", "forecast"),
        ("delete", "remove"),
        ("list", "all"),
        ("look", "read", "see"),
    )
    dim = len(concepts)

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            tokens = text.lower().replace("_", " ").split()
            for j, words in enumerate(self.concepts):
                out[i, j] = sum(tokens.count(w) for w in words)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms


TOOLS = [
    {"name": "merge_pull_request", "description": "Merge a pull request"},
    {"name": "list_releases", "description": "List releases"},
    {"name": "delete_file", "description": "Delete a file"},
    {"name": "get_weather", "description": "Forecast for a city"},
]


def scenario(*steps):
    return scenario_from_dict(
        {"name": "t", "user_request": "do it", "tools": TOOLS, "steps": [dict(s) for s in steps]}
    )


def run(sc, mode, **options):
    embedder = ConceptEmbedder()
    advisor = ToolSearchAdvisor(VectorToolIndex(embedder=embedder), reference_tool_name_accumulation=True)
    if mode == "semantic":  # the literal agent has neither: it reads words as written
        options = {"embedder": embedder, "glossary": GLOSSARY, **options}
    agent = SimulatedAgent(sc.agent_steps(), mode=mode, **options)
    return run_scenario(sc, model=agent, advisor=advisor)


LAND = {
    "need": "land PR 7 into the main line",
    "data": {"pullNumber": 7},
    "expected_tools": ["merge_pull_request"],
}
FLIGHT = {"need": "book a flight to Oslo", "data": {"city": "Oslo"}, "expected_tools": ["delete_file"]}
RAIN = {"need": "will we get soaked in Oslo", "data": {"city": "Oslo"}, "expected_tools": ["get_weather"]}


def definition(name: str) -> dict:
    tool = next(t for t in TOOLS if t["name"] == name)
    return Tool(tool["name"], tool["description"]).definition()


def test_semantic_agent_recognises_a_paraphrase_the_literal_agent_cannot():
    semantic = run(scenario(LAND), "semantic")
    literal = run(scenario(LAND), "literal")
    # the same search surfaced the tool for both agents ...
    assert "merge_pull_request" in semantic.trace.searches()[0].names
    assert "merge_pull_request" in literal.trace.searches()[0].names
    # ... only the agent that judges by meaning calls it
    assert semantic.grade.success and semantic.trace.called_tools() == ["merge_pull_request"]
    assert json.loads(semantic.trace.iterations[-2].tool_calls[0].arguments) == {}
    assert not literal.grade.success and literal.trace.called_tools() == []


def test_semantic_agent_skips_a_step_it_cannot_do_and_carries_on():
    result = run(scenario(FLIGHT, RAIN), "semantic")
    assert [s.success for s in result.steps] == [False, True]
    assert result.step_success_rate == 0.5 and not result.grade.success
    said = [it.assistant_content or "" for it in result.trace.iterations]
    assert any(s.startswith("Skipping step 1 ('book a flight to Oslo')") for s in said)
    assert result.trace.called_tools() == ["get_weather"]
    assert result.trace.final_answer.endswith("Skipped: step 1 (book a flight to Oslo)")


def test_literal_agent_still_stops_at_the_first_step_it_cannot_do():
    result = run(scenario(FLIGHT, RAIN), "literal")
    assert result.trace.called_tools() == [] and result.step_success_rate == 0.0
    assert result.trace.final_answer.startswith("I could not find a tool for step 1")


def test_semantic_agent_is_deterministic():
    def shape(result):
        return [
            (it.assistant_content, [(c.name, c.arguments) for c in it.tool_calls], it.exposed_tools)
            for it in result.trace.iterations
        ]

    sc = scenario(FLIGHT, LAND, RAIN)
    assert shape(run(sc, "semantic")) == shape(run(sc, "semantic"))


def test_semantic_agent_with_minilm_replays_a_user_worded_scenario_identically():
    def shape(result):
        return [
            (it.assistant_content, [(c.name, c.arguments) for c in it.tool_calls])
            for it in result.trace.iterations
        ]

    first = run_scenario("spring-demo-user", index="lucene", model="semantic")
    second = run_scenario("spring-demo-user", index="lucene", model="semantic")
    assert shape(first) == shape(second)
    assert first.trace.model == "simulated-semantic"
    assert first.step_success_rate == second.step_success_rate


SEARCH = Tool(TOOL_SEARCH_TOOL_NAME, "Search the tools.").definition()


def _searched(agent, history, tools):
    turn = agent.complete(history, [SEARCH, *tools])  # an agent searches only when sent the search tool
    assert turn.tool_calls and turn.tool_calls[0].name == TOOL_SEARCH_TOOL_NAME, turn
    return turn, json.loads(turn.tool_calls[0].arguments)["query"]


def _answer(history, turn, names):
    call = turn.tool_calls[0]
    return [
        *history,
        turn.to_message(),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(names)},
    ]


def test_reformulation_follows_the_documented_rule():
    need = {"need": "look at the PR for octo-org", "data": {"owner": "octo-org"}}
    # never sure and never settling, so every search rule is used
    agent = SimulatedAgent(
        [need],
        mode="semantic",
        embedder=ConceptEmbedder(),
        glossary=GLOSSARY,
        sure_threshold=9.0,
        settle_threshold=9.0,
    )
    history = [{"role": "user", "content": "x"}]
    turn, query = _searched(agent, history, [])
    assert query == "look pr octo org"  # 1: content words as written
    history = _answer(history, turn, ["delete_file"])
    turn, query = _searched(agent, history, [definition("delete_file")])
    assert query == "look pull request"  # 2: the core as read: data words dropped, "PR" read
    history = _answer(history, turn, ["merge_pull_request", "delete_file"])
    exposed = [definition("merge_pull_request"), definition("delete_file")]
    turn, query = _searched(agent, history, exposed)
    assert query == "look pull request merge"  # 3: the core + the most promising tool's name words
    history = _answer(history, turn, ["merge_pull_request"])
    final = agent.complete(history, exposed)
    assert final.tool_calls == [] and final.content.startswith("Skipping step 1")


def test_the_agent_derives_its_state_from_the_conversation_alone():
    sc = scenario(FLIGHT, LAND, RAIN)
    result = run(sc, "semantic")
    messages = result.messages
    # cut the conversation after the skip note: a fresh agent continues exactly as the original did
    cut = next(i for i, m in enumerate(messages) if (m.get("content") or "").startswith("Skipping step 1"))
    fresh = SimulatedAgent(sc.agent_steps(), mode="semantic", embedder=ConceptEmbedder(), glossary=GLOSSARY)
    names = ("merge_pull_request", "list_releases", "delete_file", "get_weather")
    exposed = [SEARCH, *(definition(n) for n in names)]
    again = fresh.complete(messages[:cut], exposed)
    assert again.to_message() == {
        k: v for k, v in messages[cut].items() if k in ("role", "content", "tool_calls")
    }


def test_fit_reads_the_need_through_the_glossary():
    embedder = ConceptEmbedder()
    merge = definition("merge_pull_request")
    read = SimulatedAgent([{"need": "check the PR"}], embedder=embedder, glossary=GLOSSARY)
    assert read.reading(read.steps[0]) == "check the pull request"
    assert read.fit(read.steps[0], merge) == pytest.approx(
        semantic_fit("check the pull request", merge, embedder)
    )
    literal = SimulatedAgent([{"need": "check the PR"}], mode="literal")
    assert literal.reading(literal.steps[0]) == "check the PR"  # the literal agent reads words as written
    with pytest.raises(TypeError, match="glossary"):  # and has no glossary to be given
        SimulatedAgent([{"need": "check the PR"}], mode="literal", glossary=GLOSSARY)


def test_the_glossary_is_what_finds_a_tool_named_in_other_words():
    tools = [
        {"name": "issue_read", "description": "Read an issue"},
        {"name": "merge_pull_request", "description": "Merge a pull request"},
        {"name": "delete_file", "description": "Delete a file"},
    ]
    sc = scenario_from_dict(
        {
            "name": "t",
            "user_request": "x",
            "tools": tools,
            "steps": [{"need": "bring up ticket 42", "expected_tools": ["issue_read"]}],
        }
    )
    knows = Glossary.from_entries([(["ticket"], ["issue"]), (["bring up"], ["read"])])

    def outcome(mode, glossary=None):
        options = {} if mode == "literal" else {"embedder": ConceptEmbedder(), "glossary": glossary}
        agent = SimulatedAgent(sc.agent_steps(), mode=mode, **options)
        result = run_scenario(sc, model=agent, advisor=ToolSearchAdvisor(BM25ToolIndex()))
        return result.trace.called_tools(), [s.query for s in result.trace.searches()]

    # the first search uses the words as written and misses; the second reads them through the glossary
    assert outcome("semantic", knows) == (["issue_read"], ["bring ticket 42", "read issue 42"])
    called, queries = outcome("semantic", Glossary())
    assert called == [] and queries[0] == "bring ticket 42" and "issue" not in " ".join(queries)
    assert outcome("literal")[0] == []  # the literal agent reads words as written


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="unknown mode 'clever'"):
        SimulatedAgent([{"need": "x"}], mode="clever")
    with pytest.raises(ValueError, match="unknown model 'psychic'"):
        run_scenario("spring-demo", model="psychic")


def test_simulated_agent_builds_the_agent_of_its_mode():
    steps = [{"need": "x"}]
    assert type(SimulatedAgent(steps)) is SemanticAgent  # the default, as the README's snippet uses it
    assert type(SimulatedAgent(steps, mode="literal")) is LiteralAgent
    assert (LiteralAgent(steps).name, SemanticAgent(steps).name) == ("simulated", "simulated-semantic")
    assert (LiteralAgent(steps).max_searches_per_step, SemanticAgent(steps).max_searches_per_step) == (2, 3)
    with pytest.raises(ValueError, match="LiteralAgent: mode is 'literal', got mode='semantic'"):
        LiteralAgent(steps, mode="semantic")
    with pytest.raises(ValueError, match="at least one step"):
        SemanticAgent([])


@pytest.mark.parametrize(
    ("name", "kind", "agent_name"),
    [
        ("simulated", SemanticAgent, "simulated-semantic"),
        ("semantic", SemanticAgent, "simulated-semantic"),
        ("semantic-no-glossary", SemanticAgent, "simulated-semantic-no-glossary"),
        ("literal", LiteralAgent, "simulated"),
    ],
)
def test_make_model_names_the_simulated_agents(name, kind, agent_name):
    model = make_model(name, [{"need": "x"}], max_results=3)
    assert type(model) is kind and model.name == agent_name and model.max_results == 3
    assert name in MODEL_NAMES


def test_make_model_passes_a_model_through_and_refuses_what_it_cannot_build(monkeypatch):
    agent = LiteralAgent([{"need": "x"}])
    assert make_model(agent) is agent
    with pytest.raises(ValueError, match="unknown model 'psychic'"):
        make_model("psychic", [{"need": "x"}])
    with pytest.raises(ValueError, match="simulated agents only"):
        make_model("openai", max_results=3)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ModelNotConfigured):
        make_model("openai")


@pytest.mark.parametrize("strategy", ["all-tools", "pre-retrieval"])
def test_sent_no_search_tool_it_never_calls_one(strategy):
    """All tools sent (or pre-retrieved ones), no toolSearchTool: the agent picks among what it was sent by
    meaning, skips what none of them does, and never calls the search tool it was not given (each such call
    was an error result and a wasted request, which made the all-tools baseline look costlier than it is)."""
    from toolsearch_lab.loop.strategies import make_strategy

    embedder = ConceptEmbedder()
    advisor = ToolSearchAdvisor(VectorToolIndex(embedder=embedder), strategy=make_strategy(strategy))
    sc = scenario_from_dict(
        {"name": "t", "user_request": "land PR 7, book a flight, will we get soaked", "tools": TOOLS,
         "steps": [LAND, FLIGHT, RAIN]}
    )  # fmt: skip
    agent = SimulatedAgent(sc.agent_steps(), embedder=embedder, glossary=GLOSSARY)
    result = run_scenario(sc, model=agent, advisor=advisor)
    calls = [c.name for it in result.trace.iterations for c in it.tool_calls]
    assert TOOL_SEARCH_TOOL_NAME not in calls
    assert calls == [
        "merge_pull_request",
        "get_weather",
    ]  # a paraphrase each: the word rule alone misses both
    assert [s.success for s in result.steps] == [True, False, True]
    assert len(result.trace.iterations) == 3  # two calls and the answer: no request wasted
