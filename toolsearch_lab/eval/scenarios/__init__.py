"""Shipped scenarios: a user request over a catalog, the steps it takes, and how to grade a run.

One module per job, all names importable from here:

- :mod:`.format` - the scenario file format: loading, listing and checking scenario files;
- :mod:`.grading` - which steps a run did, and why the others failed;
- :mod:`.running` - a run through a ToolSearchAdvisor with a model, and the matrix of all runs;
- :mod:`.report` - the matrix's totals and text tables.
"""

from __future__ import annotations

from toolsearch_lab.eval.scenarios.format import (
    HELD_OUT_SCENARIOS,
    USER_SUFFIX,
    WORDINGS,
    Scenario,
    ScenarioStep,
    ScenarioTurn,
    list_scenarios,
    load_scenario,
    scenario_from_dict,
    scenario_name,
    scenarios_dir,
    with_scenario_examples,
)
from toolsearch_lab.eval.scenarios.grading import Grade, failed_steps, grade, searches_per_step
from toolsearch_lab.eval.scenarios.report import (
    descriptions_label,
    failed_steps_text,
    markdown_tables,
    summarise_matrix,
    summary_text,
)
from toolsearch_lab.eval.scenarios.running import (
    EXAMPLES_CHOICES,
    ScenarioRun,
    buildable_indexes,
    run_scenario,
    scenario_matrix,
    scenario_model,
)

__all__ = [
    "EXAMPLES_CHOICES",
    "HELD_OUT_SCENARIOS",
    "USER_SUFFIX",
    "WORDINGS",
    "Grade",
    "Scenario",
    "ScenarioRun",
    "ScenarioStep",
    "ScenarioTurn",
    "buildable_indexes",
    "descriptions_label",
    "failed_steps",
    "failed_steps_text",
    "grade",
    "list_scenarios",
    "load_scenario",
    "markdown_tables",
    "run_scenario",
    "scenario_from_dict",
    "scenario_matrix",
    "scenario_model",
    "scenario_name",
    "scenarios_dir",
    "searches_per_step",
    "summarise_matrix",
    "summary_text",
    "with_scenario_examples",
]
