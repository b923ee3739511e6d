"""SPEC §9, access and limits: the FORBIDDEN, RATE_LIMITED and TIMEOUT envelopes, byte for byte."""

from __future__ import annotations

import anyio
import pytest

from mcpfusion import Fusion, Identity, Workflow
from mcpfusion.middleware import MemoryRateLimitStore, rate_limit
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

app = Fusion("vault")
app.middleware(rate_limit(1, 1, store=MemoryRateLimitStore(clock=lambda: 0.0)))
vault = app.tool("vault", description="Secrets.")


@vault.action(requires={"vault:read", "vault:admin"})
async def reveal(name: int) -> str:
    """Reveal a secret."""
    return "s3cr3t"


@vault.action(timeout=0.01)
async def rotate() -> str:
    """Rotate the keys."""
    await anyio.sleep_forever()
    return "never"


async def test_forbidden_envelope() -> None:
    """SPEC §9: FORBIDDEN names the missing scopes only, even before invalid arguments."""
    caller = FusionTester(app, identity=Identity("eve", scopes={"vault:read"}))
    result = await caller.call("vault", "reveal", name="not an int")
    assert result.is_error
    assert result.blocks == (
        '<tool_error code="FORBIDDEN" severity="error">\n'
        "<message>This call needs the scope 'vault:admin', which the caller does not have."
        "</message>\n"
        "<recovery>Do not retry. Tell the user this needs a permission they have not granted."
        "</recovery>\n</tool_error>",
    )
    anonymous = await FusionTester(app).call("vault", "reveal", name=1)
    assert anonymous.error is not None
    assert anonymous.error.message == (
        "This call needs the scopes 'vault:admin', 'vault:read', which the caller does not have."
    )


async def test_rate_limited_envelope() -> None:
    """SPEC §9: RATE_LIMITED carries retry_after."""
    caller = FusionTester(app, identity=Identity("rate-test"))
    await caller.call("vault", "rotate")
    result = await caller.call("vault", "rotate")
    assert result.blocks == (
        '<tool_error code="RATE_LIMITED" severity="error">\n'
        "<message>Too many calls in a short time.</message>\n"
        "<recovery>Wait for the time below, then retry the call.</recovery>\n"
        "<retry_after>1 seconds</retry_after>\n</tool_error>",
    )


async def test_timeout_envelope() -> None:
    """SPEC §9: TIMEOUT names the tool, the action and the seconds."""
    with anyio.fail_after(5):
        result = await FusionTester(app, identity=Identity("timeout-test")).call("vault", "rotate")
    assert result.blocks == (
        '<tool_error code="TIMEOUT" severity="error">\n'
        "<message>Action 'rotate' of tool 'vault' did not finish within 0.01 seconds and was "
        "stopped.</message>\n"
        "<recovery>Retry once with a narrower request; if it times out again, tell the user "
        "this action is unavailable.</recovery>\n</tool_error>",
    )


async def test_out_of_state_envelope() -> None:
    """SPEC §9: OUT_OF_STATE names the state, the states needed and the way there."""
    flow = Workflow(
        ["draft", "reviewed"],
        initial="draft",
        transitions=[("doc.review", "draft", "reviewed")],
        allowed={"doc.publish": ["reviewed"]},
    )
    gated = Fusion("docs", workflow=flow)
    doc = gated.tool("doc", description="Documents.")

    @doc.action
    async def review() -> str:
        """Review the document."""
        return "reviewed"

    @doc.action
    async def publish() -> str:
        """Publish the document."""
        return "published"

    result = await FusionTester(gated).call("doc", "publish")
    assert result.blocks == (
        '<tool_error code="OUT_OF_STATE" severity="error">\n'
        "<message>Action 'publish' of tool 'doc' is not available in state 'draft'; "
        "it needs 'reviewed'.</message>\n"
        "<recovery>Call 'doc.review' first, then retry this call.</recovery>\n"
        "<available_actions>\n  <action>doc.review</action>\n</available_actions>\n"
        "</tool_error>",
    )


async def test_busy_envelope() -> None:
    """SPEC §9: a call past its action's concurrency= is BUSY with retry_after."""
    busy_app = Fusion("busy")
    jobs = busy_app.tool("jobs", description="Jobs.")
    started, release = anyio.Event(), anyio.Event()

    @jobs.action(concurrency=1)
    async def export() -> str:
        """One export at a time."""
        started.set()
        await release.wait()
        return "exported"

    tester = FusionTester(busy_app)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(tester.call, "jobs", "export")
            await started.wait()
            result = await tester.call("jobs", "export")
            release.set()
    assert result.blocks == (
        '<tool_error code="BUSY" severity="error">\n'
        "<message>Action 'export' of tool 'jobs' was not run: too many calls of it are "
        "running.</message>\n"
        "<recovery>Wait for the time below, then retry the call once.</recovery>\n"
        "<retry_after>1 seconds</retry_after>\n</tool_error>",
    )
