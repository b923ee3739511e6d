"""concurrency= per action, and destructive calls one at a time per caller."""

from __future__ import annotations

import anyio
import pytest

from mcpfusion import DefinitionError, Fusion, Identity
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", tenant="acme")
BOB = Identity("bob", tenant="acme")


def held_app(serialize_destructive: bool = False) -> tuple[Fusion, anyio.Event, anyio.Event]:
    """An app whose actions wait for ``release`` after setting ``started``."""
    app = Fusion("held", serialize_destructive=serialize_destructive)
    jobs = app.tool("jobs", description="Jobs.")
    started, release = anyio.Event(), anyio.Event()

    @jobs.action(concurrency=1)
    async def export() -> str:
        """One export at a time."""
        started.set()
        await release.wait()
        return "exported"

    @jobs.action(destructive=True)
    async def purge(name: str) -> str:
        """Purge something."""
        started.set()
        await release.wait()
        return f"purged {name}"

    return app, started, release


async def test_concurrency_refuses_a_call_past_the_limit_as_busy() -> None:
    """A second export while one runs is BUSY with retry_after; after it, one passes."""
    app, started, release = held_app()
    tester = FusionTester(app, identity=ALICE)
    results: list[str] = []

    async def first() -> None:
        results.append((await tester.call("jobs", "export")).text)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await started.wait()
            refused = await FusionTester(app, identity=BOB).call("jobs", "export")
            release.set()
    assert refused.error_code == "BUSY"
    assert "<retry_after>1 seconds</retry_after>" in refused.text
    assert results == ["exported"]
    assert (await tester.call("jobs", "export")).text == "exported"


async def test_concurrency_serializes_destructive_calls_per_caller() -> None:
    """With serialize_destructive, Alice's second purge waits its turn; Bob's runs."""
    app, started, release = held_app(serialize_destructive=True)
    alice = FusionTester(app, identity=ALICE)
    bob_done: list[str] = []

    async def first() -> None:
        await alice.call("jobs", "purge", name="a")

    async def bob() -> None:
        bob_done.append(
            (await FusionTester(app, identity=BOB).call("jobs", "purge", name="b")).text
        )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await started.wait()
            refused = await alice.call("jobs", "purge", name="c")
            group.start_soon(bob)
            release.set()
    assert refused.error_code == "BUSY"
    assert "another change of yours is running" in refused.text
    assert bob_done == ["purged b"]


async def test_concurrency_destructive_calls_run_together_by_default() -> None:
    """Without serialize_destructive two destructive calls of one caller run at once."""
    app = Fusion("together")
    jobs = app.tool("jobs", description="Jobs.")
    both = anyio.Event()
    running: list[str] = []

    @jobs.action(destructive=True)
    async def purge(name: str) -> str:
        """Purge something; returns once two purges run at once."""
        running.append(name)
        if len(running) == 2:
            both.set()
        await both.wait()
        return f"purged {name}"

    alice = FusionTester(app, identity=ALICE)
    texts: list[str] = []

    async def call(name: str) -> None:
        texts.append((await alice.call("jobs", "purge", name=name)).text)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(call, "a")
            group.start_soon(call, "b")
    assert sorted(texts) == ["purged a", "purged b"]


def test_concurrency_definition_mistakes_fail_loudly() -> None:
    """A concurrency that is not a whole number of at least 1 is refused."""
    app = Fusion("x")
    tool = app.tool("t", description="T.")
    with pytest.raises(DefinitionError, match="concurrency is a whole number"):

        @tool.action(concurrency=0)
        async def run() -> None:
            """Run."""
