"""The browser tests' app: orders presented as a 50-row table, a chart and a diagram."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from mcpfusion import Context, Fusion, Presenter, ToolError, ui

Status = Literal["placed", "paid", "shipped"]
STATUSES: tuple[Status, ...] = ("placed", "paid", "shipped")

ORDERS = [
    {
        "id": f"ORD-{n:03d}",
        "customer": f"Customer {n}",
        "total_cents": 1000 + 137 * n,
        "status": STATUSES[n % 3],
        "secret": "never shown",
    }
    for n in range(1, 61)
]
"""Sixty orders: the Presenter's limit of 50 cuts ten."""

PROGRESS_STEPS = 3


class Order(BaseModel):
    """An order as the agent sees it."""

    id: str
    customer: str
    total_cents: int
    status: Status


order_view = Presenter("Order", Order, limit=50, rules=["total_cents is in CENTS."])


@order_view.collection_ui
def _overview(orders: list[dict[str, Any]]) -> list[ui.UIBlock]:
    totals: Counter[str] = Counter()
    for order in orders:
        totals[order["status"]] += order["total_cents"]
    return [
        ui.table(
            ["Order", "Customer", "Total", "Status"],
            [[o["id"], o["customer"], o["total_cents"] / 100, o["status"]] for o in orders],
            title="Orders",
        ),
        ui.echarts(
            {
                "xAxis": {"type": "category", "data": list(STATUSES)},
                "yAxis": {"type": "value"},
                "series": [{"type": "bar", "data": [totals[s] / 100 for s in STATUSES]}],
            },
            title="Total by status",
            width="half",
        ),
        ui.mermaid("graph LR\n  placed --> paid --> shipped", title="Order flow", width="half"),
    ]


app = Fusion("orders", version="1.0.0")
orders = app.tool("orders", description="Orders: list and cancel.")


@orders.action("list_orders", description="List orders.", returns=order_view, read_only=True)
async def list_orders(ctx: Context, status: Status | None = None) -> list[dict[str, Any]]:
    for step in range(1, PROGRESS_STEPS + 1):
        await ctx.progress(step, PROGRESS_STEPS, f"page {step}")
        await anyio.sleep(0.05)  # a slow backend, so progress is seen before the result
    return [o for o in ORDERS if status is None or o["status"] == status]


@orders.action("cancel_order", description="Cancel an order.", destructive=True)
def cancel_order(order_id: str) -> None:
    raise ToolError(
        "NOT_FOUND",
        f"Order <{order_id}> does not exist.",
        recovery="Call orders.list_orders to find a valid id.",
        available_actions=["orders.list_orders"],
    )
