"""A workflow app for the e2e tests: refunds open only after the caller reviewed an order."""

from __future__ import annotations

import os

from mcpfusion import Context, Fusion, ToolError, Workflow

refund_review = Workflow(
    ["browsing", "reviewing"],
    initial="browsing",
    transitions=[
        ("orders.review", "*", "reviewing"),
        ("refunds.issue", "reviewing", "browsing"),
    ],
    allowed={"refunds": ["reviewing"]},
    name="refunds",
)

app = Fusion("orders", workflow=refund_review)
orders = app.tool("orders", description="Orders: look one up, review it.")
refunds = app.tool("refunds", description="Refunds of reviewed orders.")


@orders.action(read_only=True)
async def worker() -> int:
    """The process answering (to see two workers serve one caller)."""
    return os.getpid()


@orders.action
async def review(ctx: Context, order_id: str) -> str:
    """Review an order before refunding it; remembers which one."""
    await ctx.caller_state.set("reviewed", order_id)
    return f"reviewed {order_id}"


@refunds.action(destructive=True)
async def issue(ctx: Context, order_id: str) -> str:
    """Refund the order this caller reviewed."""
    if await ctx.caller_state.get("reviewed") != order_id:
        raise ToolError("NOT_REVIEWED", f"Order {order_id} was not the one reviewed.")
    await ctx.caller_state.delete("reviewed")
    return f"refunded {order_id}"
