"""3 billing replicas of 2 workers behind nginx (deploy/nginx/stateless.conf), 20 clients
of 200 calls each: without a fault, then with one replica killed."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from tests.scale import load
from tests.scale.services import Redis, Replica, billing, nginx, replicas

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

CLIENTS = 20
CALLS = 200
PAYMENTS = 10
"""mark_paid calls per client, on invoices no other client touches."""


@dataclass(frozen=True)
class Deployment:
    """The replicas, nginx's URL, the database and what it held at the start."""

    replicas: list[Replica]
    url: str
    db: Path
    expected: load.Expected


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, redis: Redis) -> Iterator[Deployment]:
    """3 stateless billing replicas (2 workers each, Redis shared) behind nginx."""
    folder = tmp_path_factory.mktemp("lb")
    db = folder / "billing.db"
    expected = load.snapshot(db)
    commands = [billing(db, "--stateless", "--redis-url", redis.url, workers=2) for _ in range(3)]
    with (
        replicas(commands, folder) as started,
        nginx(folder / "nginx", "stateless.conf", [r.port for r in started]) as port,
    ):
        yield Deployment(started, f"http://127.0.0.1:{port}/mcp", db, expected)


def _payments(plans: list[list[load.Call]]) -> list[str]:
    return [c.arguments["invoice_id"] for plan in plans for c in plan if not c.read_only]


async def test_every_answer_is_correct_and_every_payment_applied_once(
    deployment: Deployment,
) -> None:
    """20 clients × 200 calls through nginx: every answer matches the database, none lost."""
    plans = load.plans(deployment.expected, CLIENTS, CALLS, PAYMENTS)
    tally = load.Tally()
    seconds = await load.run(deployment.url, plans, tally)
    print(
        f"\nno fault: {tally.ok} ok, {tally.retried} retried, {tally.failed} failed in "
        f"{seconds:.1f} s ({CLIENTS * CALLS / seconds:.0f} calls/s, p50 "
        f"{load.percentile(tally.latencies, 0.5) * 1000:.0f} ms)"
    )
    assert tally.wrong == []
    assert (tally.ok, tally.retried, tally.failed) == (CLIENTS * CALLS, 0, 0)
    assert sorted(tally.paid) == sorted(_payments(plans))
    assert load.paid_in(deployment.db, _payments(plans)) == set(_payments(plans))


async def test_a_replica_killed_mid_run_loses_no_read_and_applies_no_payment_twice(
    deployment: Deployment,
) -> None:
    """SIGKILL of one replica with calls in flight: reads retried, payments never re-sent."""
    first = CLIENTS * PAYMENTS  # the invoices the first run left unpaid
    plans = load.plans(deployment.expected, CLIENTS, CALLS, PAYMENTS, seed=17, first=first)
    victim = deployment.replicas[1]
    tally = load.Tally()
    waiting = 0

    async def kill_when_calls_wait() -> None:
        # A third of the calls done, the replica is frozen until at least three clients
        # wait on it, then killed: they fail mid-call, not before it.
        nonlocal waiting
        with anyio.fail_after(60):
            while tally.ok < CLIENTS * CALLS // 3:
                await anyio.sleep(0.05)
        victim.signal_group(signal.SIGSTOP)
        frozen = time.perf_counter()
        while tally.waiting_longer_than(0.5) < 3 and time.perf_counter() - frozen < 10:
            await anyio.sleep(0.02)
        waiting = tally.waiting_longer_than(0.5)
        victim.signal_group(signal.SIGKILL)
        victim.signal_group(signal.SIGCONT)

    async with anyio.create_task_group() as group:
        group.start_soon(kill_when_calls_wait)
        seconds = await load.run(deployment.url, plans, tally)
    print(
        f"\none replica killed ({waiting} calls waiting on it): {tally.ok} ok, "
        f"{tally.retried} retried, {tally.failed} failed in {seconds:.1f} s"
    )
    assert tally.wrong == []
    assert waiting >= 3
    assert tally.retried >= 1
    assert tally.ok + tally.retried + tally.failed == CLIENTS * CALLS
    # Only a payment caught in flight may fail; it is never re-sent, and every answered
    # one is in the database (a second application would have answered CONFLICT).
    assert tally.failed == len(tally.unanswered_payments)
    assert sorted(tally.paid + tally.unanswered_payments) == sorted(_payments(plans))
    assert load.paid_in(deployment.db, tally.paid) == set(tally.paid)
