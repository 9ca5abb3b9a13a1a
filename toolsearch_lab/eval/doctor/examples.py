"""A small help-desk catalog with planted defects, for notebook 08's doctor exercise, and the helper that
applies a student's rewritten descriptions to it."""

from __future__ import annotations

from collections.abc import Mapping

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.model import Tool


def _tool(name: str, description: str, **params: str | None) -> Tool:
    props = {p: {"type": "string", "description": d} if d else {"type": "string"} for p, d in params.items()}
    return Tool(name, description, {"type": "object", "properties": props, "required": list(params)})


def helpdesk_catalog() -> ToolCatalog:
    """Twelve help-desk tools. Planted: a blank description (``refund_order``), a vague three-word one
    (``get_ticket``), two notification tools that differ by one word, and parameters without descriptions
    (``merge_tickets``). The rest are described the way the doctor wants."""
    tools = [
        _tool("refund_order", "", order_id="Order number, e.g. '1042'.", amount="Amount to refund in EUR."),
        _tool("get_ticket", "Returns the data.", ticket_id="Ticket number, e.g. 'T-311'."),
        _tool(
            "notify_customer_by_email", "Send a message to a customer by email.", customer_id="Customer id."
        ),
        _tool("notify_customer_by_sms", "Send a message to a customer by SMS.", customer_id="Customer id."),
        _tool(
            "merge_tickets",
            "Merge duplicate support tickets into one and keep every message.",
            a=None,
            b=None,
        ),
        _tool(
            "lookup_customer",
            "Find a customer account by email address or phone number.",
            query="Email or phone.",
        ),
        _tool(
            "track_parcel",
            "Show where a shipped parcel is now and when it should arrive.",
            tracking="Tracking id.",
        ),
        _tool(
            "cancel_order",
            "Cancel an order that has not shipped yet and release its stock.",
            order_id="Order id.",
        ),
        _tool(
            "reset_password",
            "Email a customer a link to choose a new password for their account.",
            email="Email.",
        ),
        _tool(
            "list_open_tickets",
            "List the support tickets still waiting for an answer, oldest first.",
            team="Team.",
        ),
        _tool(
            "change_address", "Change the delivery address of an order before it ships.", order_id="Order id."
        ),
        _tool(
            "apply_discount",
            "Give a customer a discount code for their next order.",
            customer_id="Customer id.",
        ),
    ]
    return ToolCatalog(tools, source="helpdesk")


def rewrite_descriptions(catalog: ToolCatalog, fixes: Mapping[str, str]) -> ToolCatalog:
    """``catalog`` with the descriptions in ``fixes`` ({tool name: new description}) replaced."""
    unknown = sorted(set(fixes) - set(catalog.names))
    if unknown:
        raise KeyError(f"no tool named {', '.join(map(repr, unknown))} in {catalog.source!r}")
    tools = [
        Tool(t.name, fixes[t.name], t.parameters, t.category, t.function) if t.name in fixes else t
        for t in catalog
    ]
    return ToolCatalog(tools, source=catalog.source)
