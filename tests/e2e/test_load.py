"""Load on loopback: concurrent client sessions with mixed calls, every answer checked."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from tests.client_results import first_text
from tests.e2e.test_transports import expected, wire_form

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SESSIONS = 20
CALLS_PER_SESSION = 50

MIX: list[tuple[str, dict[str, Any]]] = [
    *[("billing", {"action": "get", "invoice_id": f"INV-{n}"}) for n in range(1, 6)],
    ("billing", {"action": "list"}),
    ("billing", {"action": "list", "status": "overdue"}),
    ("billing", {"action": "get", "invoice_id": "INV-2", "_select": ["customer"]}),
    ("billing", {"action": "note", "text": "x" * 2000}),
    ("billing", {"action": "get", "invoice_id": 7}),  # a validation error, expected too
    ("reports", {"action": "totals"}),
    ("reports", {"action": "customers"}),
    ("ops_ping", {}),
]


@pytest.fixture(params=["http_url", "stateless_url"])
def url(request: pytest.FixtureRequest) -> str:
    """The stateful, then the stateless, HTTP server's endpoint."""
    endpoint: str = request.getfixturevalue(request.param)
    return endpoint


async def test_concurrent_sessions_get_every_answer_right(app: Any, url: str) -> None:
    """20 sessions x 50 mixed calls: every result as expected, none lost; then still up."""
    wanted = [await expected(app, name, arguments) for name, arguments in MIX]
    answers: dict[tuple[int, int], bool] = {}

    async def session(number: int) -> None:
        async with Client(url) as client:
            for call in range(CALLS_PER_SESSION):
                index = (number + call) % len(MIX)
                name, arguments = MIX[index]
                result = await client.call_tool(name, arguments)
                answers[number, call] = wire_form(result) == wanted[index]

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for number in range(SESSIONS):
                group.start_soon(session, number)
        async with Client(url) as client:
            after = await client.call_tool("ops_ping", {})
    assert len(answers) == SESSIONS * CALLS_PER_SESSION
    assert all(answers.values()), [key for key, ok in answers.items() if not ok][:5]
    assert first_text(after) == "pong"
