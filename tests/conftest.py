"""Shared test configuration: hypothesis profiles and the anyio backend."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI runs every property 1,000 times (issue 2's acceptance floor); local runs stay quick.
# No deadline in either profile: a loaded machine must not turn a slow example into a failure.
settings.register_profile("ci", max_examples=1000, deadline=None)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def anyio_backend() -> str:
    """Runs ``@pytest.mark.anyio`` tests on asyncio only."""
    return "asyncio"
