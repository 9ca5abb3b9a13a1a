"""The held-out bank: answers to every exercise that a student might try without doing the work, written
for these tests and never used to write the judges. Each entry is the code a student would put in the answer
cell (variables it does not set keep the solution's values). Every one must be judged "not quite", with a
reason, and the second guesses read off its rejection must fail too (tests/course_probe.py).

Every exercise has entries here, the ones added later (07 and 09 rewritten, 07-abstention, 12) included. Every
exercise whose answer is code also gets its right answer typed in (:func:`typed_in`): as a value, and as a
function that ignores its input and returns it.
"""

from __future__ import annotations

from toolsearch_lab.ui.course import EXERCISES


def typed_in(name: str, call: str) -> list[str]:
    """The right answer typed in: what the solution ``name`` returns on the notebook's case (``call``, run
    with the solution in place) set as a value, and a function that returns it whatever it is given."""
    return [f"{name} = {call}", f"_right = {call}\ndef {name}(*args, **kwargs):\n    return _right"]


def _loop(old: str, new: str) -> str:
    """Notebook 02's solution with one move written wrong."""
    solution = EXERCISES["02"].solution
    assert old in solution, old
    return solution.replace(old, new)


HELD_OUT: dict[str, list[str]] = {
    "01": [
        "my_requests = len(run.steps)",
        "my_requests = len(run.steps) + 2",
        "my_requests = 2 * len(run.steps)",
        "my_requests = len(run.trace.iterations) - 1",
        "my_requests = float(len(run.steps) + 1)",
        "my_requests = str(len(run.steps) + 1)",
    ],
    "02": [
        # every tool in every request (tool search undone)
        _loop("[SEARCH] + [registry[name] for name in exposed]", "[SEARCH] + list(tools)"),
        # only the meta-tool, ever
        _loop("[SEARCH] + [registry[name] for name in exposed]", "[SEARCH]"),
        # the search returns every tool
        _loop("index.search(request).tool_names", "[t.name for t in tools]"),
        # the model's maxResults ignored
        _loop(
            "index.search(request).tool_names",
            'index.search(SearchRequest("mine", args["query"], 10)).tool_names',
        ),
        # replays the notebook's script instead of searching
        _loop(
            "index.search(request).tool_names",
            '{"current time": ["currentTime"], "weather": ["weather"]}.get(args["query"], [])',
        ),
        # the tool object, or a dict, instead of the tool's result as text
        _loop("run_tool(registry[call.name], args)", "str(registry[call.name])"),
        _loop("run_tool(registry[call.name], args)", "registry[call.name].function(**args)"),
        # the last turn returned whole instead of what it says
        _loop("return turn.content", "return turn"),
        *typed_in("my_loop", 'my_loop(ScriptedModel(script), tools, messages, make_index("lucene"))'),
        # the package's loop instead of one's own
        "def my_loop(model, tools, messages, index, max_results=5, merge=latest):\n"
        "    advisor = ToolSearchAdvisor(index, max_results=max_results,\n"
        "                                reference_tool_name_accumulation=False)\n"
        '    return advisor.run(model, messages, tools, session_id="mine").content',
        "my_loop = 'the loop'",
    ],
    "02-acc": [
        "def my_merge(exposed, found):\n    return found",
        "def my_merge(exposed, found):\n    return exposed",
        "def my_merge(exposed, found):\n    return found + found",
        "def my_merge(exposed, found):\n    return exposed[-1:] + found",
        "def my_merge(exposed, found):\n    return exposed or found",
        "my_merge = 'accumulate'",
        *typed_in("my_merge", 'my_merge(["weather", "clothing"], ["currentTime", "weather"])'),
    ],
    "03": [
        'my_target = "get_commit"\nmy_query = "revision revision revision"',
        'my_target = "get_commit"\nmy_query = "the weather is nice today"',
        'my_target = "list_tags"\nmy_query = "tags tags tags"',
        'my_target = "get_commit"\nmy_query = "get commit details"',
        'my_target = "create_pull_request"\nmy_query = "ask to merge my branch into main"',
        'my_target = "Get_Commit"\nmy_query = "show what changed in one revision"',
        'my_target = "play_song"\nmy_query = "put on some music please"',
    ],
    "04": [
        'my_rejected = ["clothing"]',
        'my_rejected = ["currentTime"]',
        'my_rejected = ["weather", "clothing", "currentTime"]',
        'my_rejected = ["weather", "currentTime"]',
        'my_rejected = "weather, clothing"',
        'my_rejected = ["Weather", "Clothing"]',
        "my_rejected = []",
    ],
    "05": [
        'my_words = ["carry"]\nmy_meaning = ["getPerfumeByName"]',
        'my_words = ["carry"]\nmy_meaning = ["get", "get", "get"]',
        'my_words = ["customer"]\nmy_meaning = ["perfume"]',
        'my_words = ["know"]\nmy_meaning = ["find"]',
        'my_words = ["a", "customer", "wants", "to"]\nmy_meaning = ["get", "by", "name"]',
        'my_words = ["carry"]\nmy_meaning = ["the", "of", "by"]',
        'my_words = ["carry"]\nmy_meaning = ["fragrance", "bottle", "sell"]',
    ],
    "06": [
        "my_index_builds = 3",
        "my_index_builds = 4",
        "my_index_builds = 6",
        'my_index_builds = "5"',
        "my_index_builds = 5.0",
        "my_index_builds = [5]",
    ],
    "07": [
        "my_recall_at_5 = 1.0\nmy_rr = 1.0",
        "my_recall_at_5 = 0\nmy_rr = 0",
        # divides by k, or by the ten results shown
        "my_recall_at_5 = 2 / 5\nmy_rr = 1 / 3",
        "my_recall_at_5 = 2 / 10\nmy_rr = 1 / 3",
        # every needed tool counted, wherever it ranks
        "my_recall_at_5 = len(task_ranking.relevant) / len(task_ranking.relevant)\nmy_rr = 1 / 3",
        # the first tool of the task's list, or the worst-ranked needed tool
        "my_recall_at_5 = 2 / 3\nmy_rr = 1 / 4",
        "my_recall_at_5 = 2 / 3\nmy_rr = 1 / max(r for r in task_ranking.ranks.values() if r)",
        # the two answers swapped
        "my_recall_at_5 = 1 / 3\nmy_rr = 2 / 3",
    ],
    "07-abstention": [
        "def my_threshold(confidences):\n    return 0.9",
        "def my_threshold(confidences):\n    return 1.0",
        "def my_threshold(confidences):\n    return 0",
        "def my_threshold(confidences):\n    return max(confidences) + 0.001",
        "def my_threshold(confidences):\n    return sum(confidences) / len(confidences)",
        "def my_threshold(confidences):\n    return sorted(confidences)[len(confidences) // 10]",
        # the needed-th lowest confidence itself (served: not below it), or 90 % rounded down
        "def my_threshold(confidences):\n    return sorted(confidences)[-(-9 * len(confidences) // 10) - 1]",
        "def my_threshold(confidences):\n"
        "    return sorted(confidences)[int(0.9 * len(confidences)) - 1] + 0.001",
        # the largest confidence turned away plus a margin that only fits the notebook's requests
        "def my_threshold(confidences):\n"
        "    return sorted(confidences)[-(-9 * len(confidences) // 10)] - 0.001",
        # the notebook's requests read instead of the confidences it is given
        "def my_threshold(confidences):\n"
        "    return sorted(off_domain)[-(-9 * len(off_domain) // 10) - 1] + 0.001",
        'my_threshold = "90 %"',
        *typed_in("my_threshold", "my_threshold(off_domain)"),
    ],
    "08": [
        'my_query = "current time"',
        'my_query = "time time time time"',
        'my_query = "currentTime"',
        "my_query = next(t.description for t in targets if t.name == 'currentTime')",
        'my_query = "what is the date today"',
        'my_query = "clock clock clock clock"',
    ],
    "09": [
        # the request that searched for it, the first search, the first call, the first and the last request
        "def first_in_context(run, tool):\n"
        "    return next(it.number for it in run.iterations for s in it.searches if tool in s.names)",
        "def first_in_context(run, tool):\n"
        "    return next(it.number for it in run.iterations if it.searches)",
        "def first_in_context(run, tool):\n"
        "    return next(it.number for it in run.iterations if tool in [c.name for c in it.tool_calls])",
        "def first_in_context(run, tool):\n    return run.iterations[0].number",
        "def first_in_context(run, tool):\n    return len(run.iterations)",
        # the notebook's session read instead of the run it is given
        "def first_in_context(run, tool):\n"
        "    return next(it.number for it in session.iterations if tool in it.exposed_tools)",
        'first_in_context = "the fifth"',
        *typed_in("first_in_context", 'first_in_context(session, "mcp__github__add_issue_comment")'),
    ],
    "10": [
        'my_new_tool = {"name": "play_song",\n'
        '               "description": "Play a song from the customer\'s favourite playlist."}\n'
        'my_tool_query = "put on some music for me"',
        'my_new_tool = {"name": "weather_forecast",\n'
        '               "description": "Get the weather forecast for a city for the '
        'next days."}\nmy_tool_query = "will it rain in Paris tomorrow"',
        'my_new_tool = {"name": "stock_price",\n'
        '               "description": "Get the latest stock price for a ticker symbol."}\n'
        'my_tool_query = "how much is Apple trading at"',
        'my_new_tool = {"name": "refund_shipping", "description": "refund refund refund refund refund"}\n'
        'my_tool_query = "I want my postage money back"',
        'my_new_tool = {"name": "change_delivery_address", "description": "Change the delivery address of an '
        'order that has not shipped yet."}\nmy_tool_query = "change delivery address"',
        'my_new_tool = {"name": "change_delivery_address", "description": "Change the delivery address of an '
        'order that has not shipped yet."}\nmy_tool_query = "moved moved moved moved"',
        'my_new_tool = {"name": "find_account", "description": "Find a customer account by email address."}\n'
        'my_tool_query = "which account has this email"',
        'my_new_tool = {"name": "gift card balance",\n'
        '               "description": "Check the balance left on a gift card."}\n'
        'my_tool_query = "how much is left on my voucher"',
    ],
    "10-doctor": [
        'my_fixes = {"refund_order": "The weather in Paris is sunny with light winds today.",\n'
        '            "get_ticket": "Bananas are a good source of potassium and energy for runners."}',
        'my_fixes = {"refund_order": "Show a support ticket with its messages, status and assignee.",\n'
        '            "get_ticket": "Give a customer their money back for a paid order, fully or partly."}',
        'my_fixes = {"refund_order": "refund order refund order refund order refund order",\n'
        '            "get_ticket": "ticket get ticket get ticket get ticket get"}',
        'my_fixes = {"refund_order": "Refund a customer\'s paid order and email them the receipt."}',
        'my_fixes = {"refund_order": "Refund.", "get_ticket": "Get a ticket."}',
        'my_fixes = {"refund_order": "Send a message to a customer by email.",\n'
        '            "get_ticket": "Send a message to a customer by SMS."}',
        'my_fixes = {"track_parcel": "Track a parcel for a customer and show where it is now.",\n'
        '            "cancel_order": "Cancel an order for a customer before it ships out."}',
    ],
    "12": [
        "def pins_for(run):\n    return []",
        'def pins_for(run):\n    return ["toolSearchTool"]',
        # every tool a step expected, or all of the catalog
        "def pins_for(run):\n    return sorted({tool for step in run.steps for tool in step.expected})",
        "def pins_for(run):\n    return [tool.name for tool in run.scenario.tools]",
        # the look-alikes the failing steps ran, or the tools of the steps that succeeded
        "def pins_for(run):\n"
        "    return sorted({t for step in run.steps if not step.success for t in step.called})",
        "def pins_for(run):\n"
        "    return sorted({t for step in run.steps if step.success for t in step.expected})",
        # the notebook's run read instead of the run it is given
        "def pins_for(run):\n"
        "    return sorted({t for step in history_run.steps if not step.success for t in step.expected})",
        'pins_for = ["search_issues"]',
        *typed_in("pins_for", "pins_for(history_run)"),
    ],
    "11": [
        'my_cheapest = "all-tools"',
        'my_cheapest = "ALL-TOOLS"',
        'my_cheapest = "search-only"',
        'my_cheapest = "search-only-no-accumulation"',
        'my_cheapest = "pre-retrieval"',
        'my_cheapest = "listed-names"',
        'my_cheapest = "retrieve-then-bind"',
        'my_cheapest = "inline-references"',
        'my_cheapest = "the cheapest one"',
    ],
}
