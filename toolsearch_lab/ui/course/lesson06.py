"""Notebook 06 (fingerprint and eviction): how often does LruEviction(2) index for sessions A B A C B A?"""

from __future__ import annotations

from typing import Any

from toolsearch_lab.eval.scenarios import load_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.session.eviction import LruEviction
from toolsearch_lab.ui.course.base import Exercise, Judgement

REQUESTS = ("A", "B", "A", "C", "B", "A")  # the sessions of six requests, in order, all with one catalog
LRU_MAX = 2


def lru_builds() -> tuple[int, list[str]]:
    """How often the advisor (LruEviction(2)) indexed a catalog over :data:`REQUESTS`, and its events."""
    tools = load_scenario("spring-demo").tools
    advisor = ToolSearchAdvisor(make_index("regex"), eviction=LruEviction(max_sessions=LRU_MAX))
    events = [e for session in REQUESTS for e in advisor.initialize_session(session, tools)]
    builds = sum(e.kind == "indexed" for e in events)
    return builds, [f"{e.kind} {e.session_id}" for e in events]


def judge(builds: Any, **_: Any) -> Judgement:
    if isinstance(builds, bool) or not isinstance(builds, int):
        return False, f"my_index_builds should be a whole number, not {builds!r}"
    actual, events = lru_builds()
    sessions = len(set(REQUESTS))
    if builds == actual:
        return True, f"{actual} builds for {len(REQUESTS)} requests: " + "; ".join(events)
    if builds == sessions:
        return False, (
            f"that is one build per session; LruEviction({LRU_MAX}) holds only {LRU_MAX} indexes, "
            f"so a {LRU_MAX + 1}rd session evicts the least recently used one"
        )
    if builds == len(REQUESTS):
        return False, "that is a build on every request (AlwaysEvict); LRU keeps a session used recently"
    if builds < sessions:
        return False, f"each of the {sessions} sessions is indexed at least once, on its first request"
    return False, "walk the requests and keep the LRU list: most recent last, at most two entries"


def solution() -> int:
    my_index_builds = 5
    return my_index_builds


EXERCISES = (
    Exercise(
        key="06",
        notebook="06_fingerprint_and_eviction",
        answer_cell="c09",
        hint="keep the LRU list as you go: a request to a session not in it indexes, and a third session "
        "pushes out the least recently used one.",
        solve=solution,
        wrong="my_index_builds = 3",
        why="A, B: built; A: reused; C evicts B, built; B evicts A, built; A evicts C, built. Five builds, "
        "one reuse: LRU(2) is too small for three sessions taking turns.",
        judge=judge,
    ),
)
