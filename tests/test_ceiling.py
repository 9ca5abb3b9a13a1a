"""Where a step's tool stands before any search: the agent's judgement and the index's ranking."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from toolsearch_lab.eval.ceiling import share_within, step_ranks
from toolsearch_lab.eval.scenarios import ScenarioStep, load_scenario


def test_catalog_words_put_every_tool_first_for_the_judge():
    ranks = step_ranks(load_scenario("spring-demo"))
    assert [r.judge_rank for r in ranks] == [1, 1, 1]
    assert [r.judge_first for r in ranks] == ["currentTime", "weather", "clothing"]
    assert [r.step for r in ranks] == [1, 2, 3]


def test_example_requests_move_a_users_words_step_to_the_top_of_the_judgement():
    # "log the Nike Pegasus we just got in" says nothing the description of saveShoes says; an example
    # request does ("Log New Balance 574 sneakers, US 11, ID SH-550.").
    as_shipped = step_ranks(load_scenario("spring-demo-shop-user"))[4]
    with_examples = step_ranks(load_scenario("spring-demo-shop-user", examples=True))[4]
    assert as_shipped.expected == with_examples.expected == ("saveShoes",)
    assert as_shipped.judge_rank > 1 and as_shipped.judge_first != "saveShoes"
    assert with_examples.judge_rank == 1 and with_examples.examples


def test_a_tool_the_index_never_returns_ranks_past_the_catalog():
    scenario = load_scenario("spring-demo")
    odd = dataclasses.replace(
        scenario,
        steps=[ScenarioStep(need="qqqq xyzzy", data={}, expected_tools=("weather",))],
    )
    (ranks,) = step_ranks(odd, index="regex")
    assert ranks.index_rank == len(scenario.tools) + 1
    assert 1 <= ranks.judge_rank <= len(scenario.tools)


def test_the_literal_agent_is_refused_by_name():
    with pytest.raises(ValueError, match="agent 'literal'.*expected 'semantic'"):
        step_ranks(load_scenario("spring-demo"), agent="literal")


def test_share_within():
    assert share_within([1, 2, 7, 1], 1) == 0.5
    assert share_within([1, 2, 7, 1], 5) == 0.75
    assert share_within([], 3) == 0.0


class _WeatherBlind:
    """An embedder for which any text about the weather points away from everything else."""

    name, dim = "weather-blind", 2

    def embed(self, texts):
        rows = [[1.0, 0.0] if "weather" in t.lower() else [0.0, 1.0] for t in texts]
        return np.array(rows, dtype=np.float32)


def test_the_judgement_uses_the_embedder_it_is_given():
    scenario = load_scenario("spring-demo-user")  # step 2: "is it warm or rainy out there right now"
    by_minilm = step_ranks(scenario, agent="semantic-no-glossary")
    by_blind = step_ranks(scenario, agent="semantic-no-glossary", embedder=_WeatherBlind())
    assert by_minilm[1].expected == ("weather",) and by_minilm[1].judge_rank == 1
    assert by_blind[1].judge_rank > 1 and by_blind[1].judge_first != "weather"
