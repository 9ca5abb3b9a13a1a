"""The catalog doctor (``diagnose``, ``toolsearch-lab doctor``, the CatalogDoctor view).

The planted catalog has one of each defect the doctor must find (a near-duplicate pair, a blank description,
undocumented parameters, an ``Args:`` section pasted into a description, a name defined by two servers)
among ordinary, well-described tools; every defect must be found and nothing else flagged as an error.
The default indexes (BM25 + MiniLM vectors) are used, as a user gets them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.catalog.live import connect_mcp_config, connect_mcp_stdio
from toolsearch_lab.catalog.merge import merge_catalogs
from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.doctor import DoctorReport, diagnose, first_sentence
from toolsearch_lab.eval.doctor.payoff import MIN_SAVED_SHARE, MIN_SAVED_TOKENS
from toolsearch_lab.eval.doctor.report import Payoff
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.loop.settings import DEFAULT_SYSTEM_MESSAGE_SUFFIX, AdvisorSettings
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import TokenCounter

MCP_SERVER = Path(__file__).with_name("mcp_test_server.py")


def make_tool(tool_name: str, description: str, **params: str | None) -> Tool:
    props = {p: {"type": "string", "description": d} if d else {"type": "string"} for p, d in params.items()}
    return Tool(tool_name, description, {"type": "object", "properties": props, "required": list(params)})


LEAKED = (
    "Convert an amount of money from one currency to another at today's rate.\n\n"
    "Args:\n    amount: how much\n    source: ISO code to convert from\n    target: ISO code to convert to\n"
    "\nReturns:\n    The amount."
)
MESSAGING = [
    make_tool(
        "send_notification_to_user",
        "Send a notification message to a user.",
        user_id="The user's id, e.g. 'u-42'.",
        text="The message text.",
    ),
    make_tool(
        "send_notification_to_channel",
        "Send a notification message to a channel.",
        channel_id="The channel's id, e.g. 'c-7'.",
        text="The message text.",
    ),
    make_tool("archive_ticket", "", ticket_id="The ticket number."),
    make_tool(
        "schedule_meeting",
        "Book a meeting room and invite attendees to a calendar event at a given time.",
        room=None,
        start=None,
        attendees=None,
    ),
    make_tool("convert_currency", LEAKED, amount="Amount.", source="ISO 4217 code.", target="ISO 4217 code."),
    make_tool(
        "get_weather_forecast",
        "Get the weather forecast for a city for the next five days, with temperatures and rain.",
        city="City name, e.g. 'Lyon'.",
    ),
    make_tool(
        "create_invoice",
        "Create an invoice for a customer with line items and a due date, and return its number.",
        customer="Customer id.",
        due_date="Due date as YYYY-MM-DD.",
    ),
    make_tool(
        "translate_text",
        "Translate a piece of text into another language and return the translation.",
        text="The text to translate.",
        language="Target language code, e.g. 'fr'.",
    ),
    make_tool(
        "search_flights",
        "Search for flights between two airports on a date and list prices and times.",
        origin="IATA code of the departure airport.",
        destination="IATA code of the arrival airport.",
        date="Travel date as YYYY-MM-DD.",
    ),
    make_tool(
        "resize_image",
        "Resize an image file to a given width and height in pixels and save the result.",
        path="Path of the image file.",
        width="Width in pixels.",
        height="Height in pixels.",
    ),
    make_tool(
        "lookup_order_status",
        "Look up the shipping status of a customer's order by its order number.",
        order_number="Order number, e.g. '1042'.",
    ),
    make_tool(
        "create_event",
        "Create a calendar event with a title, a start time and a list of guests.",
        title="Event title.",
        start="Start time as ISO 8601.",
    ),
]
ANALYTICS = [
    make_tool(
        "create_event",
        "Create an event in the team's analytics stream for tracking user actions.",
        name="Event name.",
        properties="Event properties as JSON.",
    ),
    make_tool(
        "list_events",
        "List the analytics events recorded for a user over a date range.",
        user_id="The user's id.",
        since="Start date as YYYY-MM-DD.",
    ),
]
PLANTED = {
    ("confusable-pair", "send_notification_to_user"),
    ("blank-description", "archive_ticket"),
    ("undocumented-parameters", "schedule_meeting"),
    ("docstring-leak", "convert_currency"),
    ("name-collision", "messaging__create_event"),
}
# The merge qualifies a name two servers define (catalog.merge): both tools stay, under distinct names.
PLANTED_TOOLS = {tool for _, tool in PLANTED} | {"send_notification_to_channel", "analytics__create_event"}


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def report() -> DoctorReport:
    return diagnose({"messaging": MESSAGING, "analytics": ANALYTICS})


def test_every_planted_defect_is_found(report):
    found = {(f.kind, f.tool) for f in report.findings}
    assert found >= PLANTED, f"missing: {PLANTED - found}"
    pair = next(f for f in report.findings if f.kind == "confusable-pair")
    assert set(pair.tools) == {"send_notification_to_user", "send_notification_to_channel"}
    assert pair.evidence["only_a"] == ["user"] and pair.evidence["only_b"] == ["channel"]
    undocumented = next(f for f in report.findings if f.kind == "undocumented-parameters")
    assert undocumented.evidence["parameters"] == ["room", "start", "attendees"]
    collision = next(f for f in report.findings if f.kind == "name-collision")
    assert collision.evidence["servers"] == ["messaging", "analytics"]
    assert collision.tools == ["messaging__create_event", "analytics__create_event"]
    assert "qualified as messaging__create_event, analytics__create_event" in collision.problem
    assert collision.severity == "warning"  # nothing is lost: both tools are in the merged catalog


def test_nothing_else_is_an_error_and_clean_tools_get_no_warnings(report):
    errors = {(f.kind, f.tool) for f in report.by_severity("error")}
    assert errors == {("blank-description", "archive_ticket")}
    warned = {name for f in report.by_severity("warning") for name in f.tools}
    assert warned <= PLANTED_TOOLS, f"false alarms on {warned - PLANTED_TOOLS}"


def test_findings_are_ranked_and_say_what_to_change(report):
    severities = [f.severity for f in report.findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    for f in report.findings:
        assert f.problem and f.fix
        if f.kind != "payoff":
            assert f.tool and f.tool in f.tools
    assert report.servers["list_events"] == "analytics"
    assert report.servers["messaging__create_event"] == "messaging"
    assert report.servers["analytics__create_event"] == "analytics"
    assert report.tools == len(MESSAGING) + len(ANALYTICS)  # none lost


def test_worst_descriptions_come_from_the_ranked_findings(report):
    assert report.worst_descriptions(2) == ["archive_ticket", "convert_currency"]
    assert report.worst_descriptions(1) == ["archive_ticket"]


def test_fixing_the_defects_clears_them_and_raises_the_score(report):
    fixed = [
        make_tool(
            "archive_ticket", "Archive a closed support ticket so it leaves the open queue.", ticket_id="Id."
        )
        if t.name == "archive_ticket"
        else t
        for t in MESSAGING
    ]
    analytics = [
        make_tool("track_event", t.description, **{p: "x" for p in t.parameters["properties"]})
        if t.name == "create_event"
        else t
        for t in ANALYTICS
    ]
    better = diagnose({"messaging": fixed, "analytics": analytics})
    assert better.by_severity("error") == []
    assert better.tool("archive_ticket").score > report.tool("archive_ticket").score
    assert better.score > report.score


def test_probes_and_ranks(report):
    item = report.tool("get_weather_forecast")
    kinds = [q.kind for q in item.queries]
    assert kinds == ["description", "name", "parameters"]
    assert item.queries[1].query == "get weather forecast"
    assert all(set(q.ranks) == set(INDEX_KINDS) for q in item.queries)  # every index, by default
    assert item.queries[0].ranks["lucene"] == 1
    blank = report.tool("archive_ticket")
    assert [q.kind for q in blank.queries] == ["name", "parameters"]  # nothing to take a sentence from
    assert (
        first_sentence(LEAKED) == "Convert an amount of money from one currency to another at today's rate."
    )
    assert [s.index for s in report.scores] == list(INDEX_KINDS)
    assert 0.0 < report.score <= 1.0


def test_costs_are_the_token_counters_numbers(report):
    merged = merge_catalogs({"messaging": ToolCatalog(MESSAGING), "analytics": ToolCatalog(ANALYTICS)})
    tools = {t.name: t for t in merged}
    for encoding in ("o200k_base", "cl100k_base"):
        counter = TokenCounter(encoding)
        assert report.cost.total[encoding] == counter.tools_tokens(list(tools.values()))
        for row in report.cost.tools:
            assert row.tokens[encoding] == counter.tool_tokens(tools[row.name])
            assert row.json_tokens[encoding] == counter.count_json(tools[row.name])
    costs = [row.tokens["o200k_base"] for row in report.cost.tools]
    assert costs == sorted(costs, reverse=True)


def test_a_long_enum_is_named_as_the_reason_a_tool_is_heavy():
    heavy = Tool(
        "set_timezone",
        "Set the user's time zone.",
        {
            "type": "object",
            "properties": {"zone": {"type": "string", "enum": [f"Region/City_{i}" for i in range(150)]}},
        },
    )
    others = [
        make_tool(f"tool_{i}", f"Do the number {i} thing for a user and return it.", x="An x.")
        for i in range(6)
    ]
    result = diagnose([heavy, *others], indexes=["lucene"])
    finding = next(f for f in result.findings if f.kind == "heavy-tool")
    assert finding.tool == "set_timezone"
    assert "long enums" in finding.problem and "enum" in finding.fix
    assert result.cost.tools[0].name == "set_timezone" and result.cost.tools[0].enum_tokens > 500


def test_payoff_counts_the_real_meta_tool_and_suffix(report):
    from toolsearch_lab.eval.doctor.payoff import payoff

    pay = report.payoff
    counter = TokenCounter("o200k_base")
    meta = ToolSearchTool(None, AdvisorSettings(max_results=pay.max_results)).as_tool()
    assert pay.meta_tool_tokens == counter.tool_tokens(meta)
    assert pay.suffix_tokens == counter.count(DEFAULT_SYSTEM_MESSAGE_SUFFIX)
    assert pay.catalog_tokens == report.cost.total["o200k_base"]
    assert pay.saved_per_task == pay.tokens_per_task_all - pay.tokens_per_task_search

    assert pay.search_every_call and pay.searches_per_task == pay.calls_per_task - 1

    def saved(calls: int, result_tokens: int = pay.result_tokens) -> int:
        again = payoff(report.cost, counter, pay.max_results, calls, result_tokens=result_tokens)
        return again.saved_per_task

    # Search pays off from break_even_calls and up to pays_off_up_to_calls, and not just outside.
    n, up = pay.break_even_calls, pay.pays_off_up_to_calls
    assert n is not None and saved(n) > 0
    assert n == 1 or saved(n - 1) <= 0
    assert up is None or (saved(up) > 0 and saved(up + 1) <= 0)
    # Every later request carries a result again, and a search adds requests: longer results, less saved.
    assert saved(pay.calls_per_task, 1_000) < pay.saved_per_task < saved(pay.calls_per_task, 0)
    rec = report.recommendation
    assert rec.index in INDEX_KINDS and 1 <= rec.max_results <= 10
    assert set(rec.reasons) == {"tool_search", "index", "max_results", "accumulation", "abstention"}


def test_report_round_trips_through_json(report):
    text = report.to_json()
    again = DoctorReport.from_json(text)
    assert again == report
    assert again.to_json() == text
    with pytest.raises(ValueError, match="unknown field.*'colour'"):
        DoctorReport.from_dict({**json.loads(text), "colour": "red"})


def test_python_functions_and_provider_name_rules():
    def find_hotel(city: str, nights: int) -> str:
        """Find hotel rooms available in a city for a number of nights.

        Args:
            city: City to stay in, e.g. 'Oslo'.
            nights: How many nights.
        """
        return city

    def cancel_booking(booking_id: str) -> str:
        """Cancel a hotel booking by its id and refund the guest when allowed."""
        return booking_id

    dotted = make_tool(
        "hotel.rate-room", "Rate a hotel room after a stay, from one to five stars.", stars="1-5."
    )
    camel = make_tool("hotelRateRoom", "Give a hotel room a rating between one and five stars.", stars="1-5.")
    result = diagnose([find_hotel, cancel_booking, dotted, camel], indexes=["lucene"])
    kinds = {(f.kind, f.tool) for f in result.findings}
    assert ("docstring-leak", "find_hotel") not in kinds  # the docstring went into the schema, not the text
    assert ("undocumented-parameters", "cancel_booking") in kinds
    bad = next(f for f in result.findings if f.kind == "provider-name")
    assert bad.severity == "error" and bad.tool == "hotel.rate-room" and "hotel_rate-room" in bad.fix
    similar = next(f for f in result.findings if f.kind == "similar-names")
    assert similar.tools == ["hotel.rate-room", "hotelRateRoom"]


def test_parsed_json_and_load_problems():
    good = [
        {"name": t.name, "description": t.description, "inputSchema": t.parameters} for t in MESSAGING[5:9]
    ]
    broken = {"name": "bad tool!", "description": "Has a space and a bang in its name.", "inputSchema": None}
    result = diagnose({"tools": [*good, broken]}, indexes=["lucene"])
    assert result.tools == 4 and result.source == "json"
    left_out = next(f for f in result.findings if f.kind == "load-error")
    assert left_out.severity == "error" and left_out.tool == "bad tool!" and "name" in left_out.problem
    assert diagnose([t.definition() for t in MESSAGING[5:9]], indexes=["lucene"]).tools == 4
    with pytest.raises(ValueError, match="no tools to diagnose; the loader reported 1 problem"):
        diagnose({"tools": [broken]}, indexes=["lucene"])


def test_live_mcp_server_over_stdio():
    with connect_mcp_stdio(sys.executable, [str(MCP_SERVER)], timeout=20) as servers:
        result = diagnose(servers, indexes=["lucene"])
        assert diagnose(servers.catalog, indexes=["lucene"]).findings == result.findings
    kinds = {(f.kind, f.tool) for f in result.findings}
    # The MCP SDK copies the whole docstring into the description and leaves the parameters undocumented.
    assert ("docstring-leak", "add") in kinds
    assert ("undocumented-parameters", "add") in kinds
    assert result.recommendation.use_tool_search is False  # five tools: send them all


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "diagnose: k must be a positive integer, got 0"),
        ({"indexes": ["bm42"]}, "unknown index kind"),
        ({"encodings": ["p50k"]}, "unknown encoding 'p50k'"),
        ({"calls_per_task": 0}, "calls_per_task must be a positive integer"),
        ({"searches_per_task": -1}, r"searches_per_task must be a non-negative integer \(>= 0\), got -1"),
        ({"searches_per_task": True}, "searches_per_task must be a non-negative integer"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        diagnose(MESSAGING[:3], **kwargs)


def test_bad_catalogs_are_named():
    with pytest.raises(ValueError, match="catalog is empty"):
        diagnose([])
    with pytest.raises(TypeError, match="catalog item #1 is a int"):
        diagnose([MESSAGING[0], 7])
    with pytest.raises(ValueError, match="unknown catalog 'no-such-catalog'"):
        diagnose("no-such-catalog")


def test_cli_text_on_a_json_file_and_a_live_server(tmp_path, capsys):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([t.definition() for t in MESSAGING]), encoding="utf-8")
    code = main(
        ["doctor", str(path), "--mcp", f"{sys.executable} {MCP_SERVER}", "--index", "lucene", "--top", "3"]
    )
    out = capsys.readouterr()
    assert code == 0
    assert "tools from 2 servers" in out.out and "findings:" in out.out
    assert "ERROR   blank-description archive_ticket" in out.out
    assert "doctor" in out.err  # the progress bar goes to stderr


def test_cli_needs_a_catalog(capsys):
    assert main(["doctor"]) == 2
    assert "give at least one CATALOG" in capsys.readouterr().err


@pytest.mark.parametrize(
    "indexes",
    [
        pytest.param(["--index", "lucene"], id="lucene"),
        pytest.param([], marks=pytest.mark.slow, id="default-indexes"),
    ],
)
def test_cli_github_mcp_json(capsys, indexes):
    assert main(["doctor", "github-mcp", "--json", "--no-progress", *indexes]) == 0
    data = json.loads(capsys.readouterr().out)
    report = DoctorReport.from_dict(data)
    assert report.tools == 117 and report.indexes == (["lucene"] if indexes else list(INDEX_KINDS))
    assert report.by_severity("error") == []
    assert any(f.kind == "confusable-pair" for f in report.findings)
    # 117 tools: most of every request is the tool list, and search saves most of it.
    assert report.recommendation.use_tool_search and report.payoff.saved_share >= 0.25
    assert report.payoff.bill_saved_share >= 0.25  # billed with prompt caching, too


def test_payoff_of_no_tools_is_refused_by_name(report):
    from dataclasses import replace

    from toolsearch_lab.eval.doctor.payoff import payoff

    with pytest.raises(ValueError, match="payoff: the cost report has no tools"):
        payoff(replace(report.cost, tools=[]), TokenCounter("o200k_base"), 5, 4)


def test_cli_result_tokens_reach_the_payoff(capsys):
    def payoff_for(result_tokens: str) -> Payoff:
        args = ["doctor", "github-mcp", "--json", "--no-progress", "--index", "lucene"]
        assert main([*args, "--result-tokens", result_tokens]) == 0
        return DoctorReport.from_dict(json.loads(capsys.readouterr().out)).payoff

    short, long = payoff_for("0"), payoff_for("2000")
    assert (short.result_tokens, long.result_tokens) == (0, 2000)
    # The all-tools task carries each result on fewer requests than the search task does.
    assert long.tokens_per_task_all > short.tokens_per_task_all
    assert long.saved_per_task < short.saved_per_task
    with pytest.raises(SystemExit) as exit_:
        main(["doctor", "github-mcp", "--result-tokens", "-1"])
    assert exit_.value.code == 2
    assert "--result-tokens: expected an integer >= 0, got '-1'" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_livemcpbench_json(capsys):
    assert main(["doctor", "livemcpbench", "--json", "--no-progress"]) == 0
    report = DoctorReport.from_dict(json.loads(capsys.readouterr().out))
    assert report.tools == 510
    errors = {f.kind for f in report.by_severity("error")}
    assert errors == {"blank-description", "name-collision"}
    collision = next(f for f in report.findings if f.kind == "name-collision")
    assert "also on server" in collision.problem


def test_catalog_doctor_view(report):
    from toolsearch_lab.ui.doctor import CatalogDoctor, confusion_spec, sort_findings

    view = CatalogDoctor(report)
    assert "Findability score" in view.summary.value
    assert f"({report.payoff.result_tokens}-token tool results)" in view.summary.value  # the assumption shown
    assert view.table.value.count("<tr>") == len(report.findings) + 1
    view.severity.value = "error"
    assert view.table.value.count("<tr>") == 2 and "archive_ticket" in view.table.value
    by_tool = sort_findings(report.findings, "tool")
    assert [f.tool for f in by_tool if f.tool] == sorted(f.tool for f in report.findings if f.tool)
    spec = confusion_spec(report)
    assert {"send_notification_to_user", "send_notification_to_channel"} <= set(spec["data"][0]["x"])
    view.select_tool("convert_currency")
    assert "Convert an amount of money" in view.detail.value and "#1" in view.detail.value
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        view.select_tool("nope")


def test_a_tool_its_own_queries_cannot_find_is_an_error():
    twins = [Tool(f"weather_{i}", "Get the weather forecast for a city.") for i in range(1, 10)]
    result = diagnose(twins, indexes=["lucene"], k=5)
    unfindable = [f for f in result.findings if f.kind == "unfindable"]
    assert [f.tool for f in unfindable] == ["weather_6", "weather_7", "weather_8", "weather_9"]
    assert all(f.severity == "error" and "take the top spots" in f.problem for f in unfindable)
    duplicate = next(f for f in result.findings if f.kind == "duplicate-description")
    assert duplicate.tools == [t.name for t in twins]


def test_destructive_tools_are_listed_as_information():
    table = {"type": "object", "properties": {"table": {"type": "string", "description": "Table name."}}}
    tools = [
        Tool("drop_table", "Drop a table and every row in it.", table, annotations={"destructiveHint": True}),
        Tool("list_tables", "List the tables of the database.", annotations={"readOnlyHint": True}),
        Tool("rename_table", "Rename a table of the database.", table),
        Tool("truncate_table", "Delete every row of a table.", table, annotations={"destructiveHint": True}),
    ]
    report = diagnose(tools, indexes=["lucene"])
    (finding,) = [f for f in report.findings if f.kind == "destructive"]
    assert finding.severity == "info" and finding.tools == ["drop_table", "truncate_table"]
    assert "2 tools declared destructive" in finding.problem and 'destructive="ask"' in finding.fix
    # rename_table says nothing either way: MCP assumes it may be destructive, so it is named as such.
    assert finding.evidence == {"declared": ["drop_table", "truncate_table"], "unstated": ["rename_table"]}
    assert "; 1 more says nothing either way" in finding.problem
    assert DoctorReport.from_json(report.to_json()).findings == report.findings
    plain = diagnose([Tool(t.name, t.description, t.parameters) for t in tools], indexes=["lucene"])
    assert not [f for f in plain.findings if f.kind == "destructive"]


def test_one_tool_is_one_tool():
    report = diagnose([MESSAGING[5]], indexes=["lucene"])
    assert report.recommendation.reasons["tool_search"].startswith("only 1 tool: below about 10")
    assert not report.recommendation.use_tool_search


def test_swapped_pairs_of_a_sqlite_like_server():
    """The tools of mcp-server-sqlite, as it describes them: reads and writes are told apart by one word."""

    def sql_tool(tool_name: str, description: str, **params: str) -> Tool:
        return make_tool(tool_name, description, **params)

    sqlite = [
        sql_tool(
            "read_query", "Execute a SELECT query on the SQLite database", query="SELECT SQL query to execute"
        ),
        sql_tool(
            "write_query",
            "Execute an INSERT, UPDATE, or DELETE query on the SQLite database",
            query="SQL query to execute",
        ),
        sql_tool(
            "create_table", "Create a new table in the SQLite database", query="CREATE TABLE SQL statement"
        ),
        make_tool("list_tables", "List all tables in the SQLite database"),
        sql_tool(
            "describe_table",
            "Get the schema information for a specific table",
            table_name="Name of the table to describe",
        ),
        sql_tool(
            "append_insight", "Add a business insight to the memo", insight="Business insight from the data"
        ),
    ]
    report = diagnose(sqlite)
    pairs = {frozenset((p.a, p.b)): p for p in report.confusable}
    pair = pairs[frozenset(("read_query", "write_query"))]
    assert "swapped" in pair.signals and pair.a_swapped_to_b + pair.b_swapped_to_a >= 1
    for p in report.confusable:  # every pair is one a search really mixed up, whatever its cosine
        assert p.a_swapped_to_b + p.b_swapped_to_a > 0 or "words" in p.signals, p
    assert not any({"append_insight"} & set(p) for p in pairs)


# Plain requests for mcp-server-git's 12 tools, written as a user asks, before looking at the doctor's probes.
# Each names the tools that would do; a request is found when one of them is in the top k.
GIT_REQUESTS = [
    ("what changed since my last commit", {"git_diff_unstaged", "git_diff", "git_status"}),
    ("show me the staged changes", {"git_diff_staged"}),
    ("switch to the feature branch", {"git_checkout"}),
    ("which files have I modified", {"git_status"}),
    ("save my work with the message fix typo", {"git_commit"}),
    ("put the new file into the next commit", {"git_add"}),
    ("take everything out of the staging area again", {"git_reset"}),
    ("list the last ten commits", {"git_log"}),
    ("start a new branch called release-2 off main", {"git_create_branch"}),
    ("what branches are there", {"git_branch"}),
    ("compare my branch with main", {"git_diff"}),
    ("what did commit abc123 do", {"git_show"}),
    ("what have I edited that is not staged yet", {"git_diff_unstaged"}),
    ("who committed in the last week", {"git_log"}),
    ("is my working copy clean", {"git_status"}),
]


@pytest.fixture(scope="module")
def git_config(tmp_path_factory):
    from test_mcp_real_servers import _repository, _server

    git, time_server = _server("mcp-server-git"), _server("mcp-server-time")
    base = tmp_path_factory.mktemp("doctor-git")
    alpha, beta = _repository(base / "alpha", "a.txt"), _repository(base / "beta", "b.txt")
    one = base / "git_only.json"
    one.write_text(
        json.dumps({"mcpServers": {"git": {"command": git, "args": ["--repository", str(alpha)]}}})
    )
    many = base / "claude_desktop_config.json"
    servers = {
        "git alpha": {"command": git, "args": ["--repository", str(alpha)]},
        "git-beta": {"command": git, "args": ["--repository", str(beta)]},
        "time": {"command": time_server},
        "broken": {"command": str(base / "no-such-server")},
    }
    many.write_text(json.dumps({"mcpServers": servers}))
    return {"one": one, "many": many}


@pytest.mark.slow
def test_the_git_servers_verdict_range_and_pairs_agree_with_measurement(git_config):
    from toolsearch_lab.catalog.mcp_config import load_mcp_config
    from toolsearch_lab.eval.doctor.payoff import payoff, recommend
    from toolsearch_lab.eval.metrics import rank_queries
    from toolsearch_lab.index.factory import make_index

    report = diagnose(load_mcp_config(git_config["one"]))  # the doctor starts the servers and stops them
    assert report.tools == 12 and set(report.servers.values()) == {"git"}
    pay, rec = report.payoff, report.recommendation
    # 806 tokens of tools: searching before each call costs more than it saves (a real run of a 3-step
    # task measured 42 % more prompt tokens with search), and the verdict says by how much.
    assert pay.saved_share < 0.25 and not rec.use_tool_search
    assert pay.priced_as and pay.bill_saved_share < 0.25 and pay.bill_all_usd > 0
    how_much = f"{abs(pay.saved_per_task):,} tokens ({abs(pay.saved_share):.0%})"
    assert how_much in rec.reasons["tool_search"], rec.reasons["tool_search"]
    # With one search per task (the old assumption) search saves more; the verdict follows the same rule and
    # says by how much either way.
    one = payoff(report.cost, TokenCounter("o200k_base"), rec.max_results, pay.calls_per_task, 1)
    assert one.saved_share > pay.saved_share
    verdict = recommend((rec.index, ""), (rec.max_results, ""), one, report.tools)
    assert verdict.use_tool_search == (
        one.saved_share >= MIN_SAVED_SHARE and one.saved_per_task >= MIN_SAVED_TOKENS
    )
    assert verdict.verdict.startswith(
        f"yes: saves {one.saved_per_task:,} tokens"
        if verdict.use_tool_search
        else f"no: the saving is too small: {one.saved_per_task:,} tokens ({one.saved_share:.0%}) per task"
    )
    accumulated = pay.calls_per_task * pay.discovered_tokens
    assert accumulated > pay.catalog_tokens and "more than sending everything" in rec.reasons["accumulation"]

    index = make_index(rec.index)
    with connect_mcp_config(git_config["one"]) as servers:
        index.index_tools("plain", servers.catalog.tools)
    ranked = rank_queries(index, "plain", [q for q, _ in GIT_REQUESTS], report.k)
    found = sum(bool(want & set(names)) for (_, want), (names, _) in zip(GIT_REQUESTS, ranked, strict=True))
    low, high = report.findable_range
    assert low <= found / len(GIT_REQUESTS) <= high, (low, found, high)

    pairs = {frozenset((p.a, p.b)) for p in report.confusable}
    assert frozenset(("git_diff_staged", "git_diff_unstaged")) in pairs
    assert frozenset(("git_diff", "git_diff_unstaged")) in pairs
    for p in report.confusable:
        assert p.a_swapped_to_b + p.b_swapped_to_a > 0 or "words" in p.signals, p


@pytest.mark.slow
def test_two_git_servers_and_time_merge_like_the_catalog_and_name_the_failed_server(git_config):
    from toolsearch_lab.catalog.mcp_config import load_mcp_config

    report = diagnose(load_mcp_config(git_config["many"]), indexes=["lucene"])
    assert report.tools == 2 * 12 + 2  # none lost
    assert set(report.servers.values()) == {"git alpha", "git-beta", "time"}
    assert list(report.failed_servers) == ["broken"]
    failed = next(f for f in report.findings if f.kind == "server-failed")
    assert "'broken'" in failed.problem
    collisions = [f for f in report.findings if f.kind == "name-collision"]
    assert len(collisions) == 12
    # 26 tools save tokens, but billed with prompt caching (the all-tools list is served from the cache
    # after the first request) search saves too little of the bill (test_doctor_advice.py checks the verdict
    # against a real run of a task both ways); the verdict leads with the bill, not with the saving.
    pay = report.payoff
    assert pay.saved_share > 0.4 and pay.bill_saved_share < MIN_SAVED_SHARE
    assert not report.recommendation.use_tool_search
    assert (
        f"billed at {pay.priced_as} prices with prompt caching, search"
        in (report.recommendation.reasons["tool_search"])
    )
    assert report.recommendation.verdict.startswith("no: billed with prompt caching, ")
    assert report.duplicate_servers == {"git-beta": "git alpha"}
    status = next(f for f in collisions if f.evidence["name"] == "git_status")
    assert status.tools == ["git_alpha__git_status", "git-beta__git_status"]
    assert status.evidence["servers"] == ["git alpha", "git-beta"] and status.evidence["identical"]
