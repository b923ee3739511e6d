"""Unit tests of mcpfusion._app.answering: the middleware chain's endpoint and the handler's run."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import Fusion
from mcpfusion.middleware import Call, Next
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


async def test_a_middleware_passing_on_a_call_of_its_own_fails_readably() -> None:
    """The chain's endpoint runs only a Call the pipeline made; another one is an error
    result naming nothing internal, and the handler does not run."""
    app = Fusion("notes")
    ran: list[str] = []
    app.tool("side").action("effect")(lambda: ran.append("ran"))

    async def swap(call: Call, call_next: Next) -> Any:
        fresh = Call(
            call.tool, call.action, call.arguments, call.identity, {}, None, None, None, None
        )
        return await call_next(fresh)

    app.middleware(swap)
    result = await FusionTester(app).call("side", "effect")
    assert result.error_code == "INTERNAL_ERROR" and ran == []
    assert result.error is not None and "Call(" not in result.error.message
