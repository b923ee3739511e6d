"""Unit tests of mcpfusion._app.serving: what servers ask of an app, and serving it."""

from __future__ import annotations

import inspect

import pytest
from starlette.applications import Starlette

from mcpfusion._app.app import Fusion


def test_fusion_serving_methods_delegate() -> None:
    """``Fusion.asgi_app`` builds the adapter's app; ``run`` rejects an unknown transport."""
    app = Fusion("demo")
    assert isinstance(app.asgi_app(path="/x"), Starlette)
    with pytest.raises(ValueError, match="transport must be 'stdio' or 'http'"):
        app.run("sse")  # type: ignore[arg-type]


def test_call_tool_stays_an_async_method() -> None:
    """``Fusion.call_tool`` is an ``async def``: frameworks that inspect a handler before
    awaiting it (mounted apps, adapters) see a coroutine function."""
    assert inspect.iscoroutinefunction(Fusion.call_tool)
