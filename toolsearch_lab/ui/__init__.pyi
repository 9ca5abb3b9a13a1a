"""Every public name of this front door, the one list of them: type checkers read it as the package's
interface, and the runtime builds ``__all__`` and the lazy loading from it (:mod:`toolsearch_lab.lazy`)."""

from . import theme as theme
from .catalog_view import CatalogView as CatalogView
from .charts import error_chart as error_chart, line_chart as line_chart, rank_table as rank_table
from .course import check as check, reveal as reveal
from .display import Html as Html, Prose as Prose, Table as Table
from .doctor import CatalogDoctor as CatalogDoctor
from .eviction_view import (
    EvictionSimulator as EvictionSimulator,
    index_builds as index_builds,
    rebuilt_advisor_runs as rebuilt_advisor_runs,
    rebuilt_advisor_table as rebuilt_advisor_table,
    session_events_table as session_events_table,
)
from .index_explorer import IndexExplorer as IndexExplorer
from .replay_view import (
    replay_comparison_table as replay_comparison_table,
    replay_search_table as replay_search_table,
    request_table as request_table,
    runs_overview as runs_overview,
)
from .retrieval_explorer import (
    RetrievalExplorer as RetrievalExplorer,
    metrics_table as metrics_table,
    ranking_table as ranking_table,
)
from .stepper import IterationStepper as IterationStepper
from .stepper_demos import (
    SPRING_DESCRIBED_DEFAULT as SPRING_DESCRIBED_DEFAULT,
    config_side_by_side as config_side_by_side,
    max_results_cases as max_results_cases,
    max_results_table as max_results_table,
    rejected_calls as rejected_calls,
    remembering_runs as remembering_runs,
    runs_table as runs_table,
)
from .stepper_turns import turn_view as turn_view, turns_table as turns_table
from .strategy_lab import (
    StrategyLab as StrategyLab,
    comparison_table as comparison_table,
    pareto_figure as pareto_figure,
    pareto_spec as pareto_spec,
    prefix_html as prefix_html,
    prefix_view as prefix_view,
    spring_order_run as spring_order_run,
    table_html as table_html,
)
from .tokens_dashboard import TokenDashboard as TokenDashboard
from .trace_viewer import TraceViewer as TraceViewer, grade_table as grade_table, usage_table as usage_table
from .wording_view import (
    WordingBrowser as WordingBrowser,
    agents_table as agents_table,
    best_index as best_index,
    ceiling_shares as ceiling_shares,
    ceiling_table as ceiling_table,
    examples_table as examples_table,
    glossary_runs as glossary_runs,
    glossary_table as glossary_table,
    matrix_table as matrix_table,
    wording_table as wording_table,
)
