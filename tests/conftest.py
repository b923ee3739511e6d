"""Shared test configuration: hypothesis profiles, the anyio backend, sync code outside loops."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sniffio
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


# While an async fixture of a wider scope is alive, anyio's pytest plugin leaves sniffio's
# "current library" set to asyncio in the main context, although no loop runs between
# tests; with sniffio installed (the provider SDKs of the dev extra bring it), a sync
# fixture or test calling anyio.run (FusionTester.call_sync, recorded sessions) is then
# refused with "Already running asyncio in this thread". Sync code runs outside any loop.


@contextmanager
def _outside_any_loop(function: Callable[..., Any]) -> Iterator[None]:
    if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function):
        yield
        return
    token = sniffio.current_async_library_cvar.set(None)
    try:
        yield
    finally:
        sniffio.current_async_library_cvar.reset(token)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
    """Sets a sync fixture up with no async library marked current."""
    with _outside_any_loop(fixturedef.func):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, Any, Any]:
    """Runs a sync test with no async library marked current."""
    with _outside_any_loop(pyfuncitem.obj):
        return (yield)
