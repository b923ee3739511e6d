"""What the billing example's unit tests share: its identities and a running app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from examples.billing import seed, tenants
from examples.billing.server import create_app
from mcpfusion import Identity
from mcpfusion.testing import FusionTester

GLOBEX_INVOICE = f"INV-{seed.SECOND_FIRST_INVOICE:05d}"
"""The first invoice of the second tenant (Globex)."""


async def key_identity(key: str) -> Identity:
    """The identity the example's configuration gives an API key."""
    identity = await tenants.verifier().verify(key)
    assert identity is not None
    return identity


@asynccontextmanager
async def running_billing(folder: Path) -> AsyncIterator[FusionTester]:
    """The billing app on a fresh database in ``folder``, inside its lifespan."""
    async with FusionTester(create_app(folder / "billing.db")) as running:
        yield running
