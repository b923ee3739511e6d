"""The billing example's way in: the app's state and the caller's tenant ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from examples.billing.db import BillingDB, Ledger
from mcpfusion import Context, ToolError

InvoiceId = Annotated[
    str, Field(description="Invoice id, e.g. INV-00001.", pattern=r"^INV-\d+$", max_length=16)
]
CustomerId = Annotated[
    str, Field(description="Customer id, e.g. CUS-0001.", pattern=r"^CUS-\d+$", max_length=16)
]


def not_found(kind: str, ident: str, listing: str) -> ToolError:
    """The error for an id the caller's tenant does not have (another tenant's too)."""
    return ToolError(
        "NOT_FOUND",
        f"{kind} {ident} does not exist.",
        recovery=f"Call {listing} to find a valid id.",
        available_actions=[listing],
    )


@dataclass(frozen=True)
class BillingState:
    """What the lifespan opens once per process: the database."""

    db: BillingDB


def ledger(state: BillingState, ctx: Context) -> Ledger:
    """The caller's tenant's ledger: the only way a handler reaches billing data."""
    tenant = ctx.identity.tenant if ctx.identity is not None else None
    if tenant is None:
        raise ToolError("NO_TENANT", "The caller acts for no tenant, so there is no data to see.")
    return state.db.tenant(tenant)
