"""The request-state attacks' app: a confirmed action naming its process, a scoped resource."""

from __future__ import annotations

import os

from mcpfusion import Fusion

app = Fusion("orders")
orders = app.tool("orders", description="Orders.")


@orders.action(destructive=True, confirm="Delete order {order_id}?")
def delete(order_id: str) -> str:
    """Delete an order (idempotent here: the attacks send its second round many times)."""
    return f"deleted {order_id} in {os.getpid()}"


@app.resource("vault://keys", requires={"vault:read"})
def vault_keys() -> str:
    """The vault's keys, for callers holding vault:read only."""
    return "k-1"
