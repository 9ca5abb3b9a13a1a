"""The semantic agent's glossary: reading everyday words as the catalogs' words, the shipped file, and the
clear errors a broken glossary file gets."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.eval.scenarios import load_scenario, run_scenario
from toolsearch_lab.models.glossary import Glossary, default_glossary, glossary_words
from toolsearch_lab.models.simulated import SimulatedAgent

SMALL = Glossary.from_entries(
    [
        (["ticket", "bug"], ["issue"]),
        (["pull up", "have a look at"], ["get", "read"]),
        (["pull"], ["fetch"]),
        (["pr"], ["pull request"]),
        (["what's"], ["get"]),
    ]
)


def test_reading_replaces_the_longest_known_phrase_and_keeps_the_rest():
    assert SMALL.read("Pull up ticket #42, please") == "get read issue 42 please"
    assert SMALL.read("pull the PR") == "fetch the pull request"  # "pull" alone is another phrase
    assert SMALL.read("What’s new?") == "get new"  # a typographic apostrophe reads as a plain one
    assert SMALL.readings("have a look at PR 7") == [("have a look at", "get read"), ("pr", "pull request")]


def test_unknown_words_stay_as_written():
    assert SMALL.read("merge branch fix-issue-42 into main") == "merge branch fix issue 42 into main"
    assert Glossary().read("Pull up ticket 42") == "pull up ticket 42"


def test_a_glossary_is_extended_with_a_team_s_own_words():
    ours = SMALL.extended([(["jira"], ["issue"]), (["pull"], ["get"])])
    assert ours.read("pull JIRA-7") == "get issue 7"  # a new phrase, and a known one with a new meaning
    assert SMALL.read("pull JIRA-7") == "fetch jira 7"  # the original is unchanged
    with pytest.raises(ValueError, match="extended glossary: entry 1 repeats the phrase 'x'"):
        SMALL.extended([(["x", "X"], ["y"])])


def test_a_phrase_given_twice_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"entry 2 repeats the phrase 'pull up'"):
        Glossary.from_entries([(["pull up"], ["get"]), (["Pull  Up"], ["read"])])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", 'expected an object with an "entries" list'),
        ('{"entries": [5]}', "entry 1 is int, expected an object"),
        (
            '{"entries": [{"say": ["x"], "means": []}]}',
            'entry 1: "means" must be a non-empty list of strings',
        ),
        ('{"entries": [{"say": "x", "means": ["y"]}]}', 'entry 1: "say" must be a non-empty list of strings'),
        ('{"entries": [{"say": ["?!"], "means": ["y"]}]}', "entry 1 has an empty phrase '\\?!'"),
        ('{"entries": [{"say": ["x"], "means": ["--"]}]}', "entry 1 means nothing"),
        ("{", "cannot read the glossary"),
        ('{"entries": [{"say": ["caf\u00e9"], "means": ["x"]}]}', "cannot read the glossary"),  # not UTF-8
    ],
)
def test_a_broken_glossary_file_names_the_file_and_the_entry(tmp_path, content, message):
    path = tmp_path / "mine.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(ValueError, match=message) as info:
        Glossary.load(path)
    assert str(path) in str(info.value)


def test_the_shipped_glossary_is_general_and_well_formed(tmp_path):
    glossary = default_glossary()
    assert len(glossary.entries) >= 300
    assert all(glossary_words(" ".join(m)) == list(m) for m in glossary.entries.values())
    assert not [p for p, m in glossary.entries.items() if p == " ".join(m)]  # no entry says itself
    # round trip through the file format
    raw = {"entries": [{"say": [p], "means": list(m)} for p, m in glossary.entries.items()]}
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(raw))
    assert Glossary.load(path) == glossary


def test_one_entry_of_a_team_s_words_flips_the_step_notebook_03_shows():
    task = load_scenario("github-user")
    ours = default_glossary().extended([(["know"], ["comment"])])
    steps = {}
    for label, glossary in (("shipped", default_glossary()), ("ours", ours)):
        agent = SimulatedAgent(task.agent_steps(), glossary=glossary)
        steps[label] = [s.success for s in run_scenario(task, index="hybrid", model=agent).steps]
    assert not steps["shipped"][2] and steps["ours"][2]  # "let the reporter of #42 know a fix is on the way"
