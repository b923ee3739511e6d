"""RedisTaskStore on a real redis-server: the TaskStore contract, and what Redis adds."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from mcpfusion._serve.task_redis import RedisTaskStore, TaskStoreUnavailable
from mcpfusion._tasks.store import TaskRecord, TaskStore
from tests.scale.services import Redis, free_port

# The contract's tests, collected here once more against Redis (make_store below).
from tests.unit._tasks.test_store import (  # noqa: F401 - imported to be collected
    Clock,
    clock,
    record,
    store,
    test_a_created_task_is_readable_at_once,
    test_a_task_lives_for_its_ttl_after_its_last_change,
    test_a_terminal_task_never_changes_again,
    test_an_unknown_id_reads_as_none,
    test_cancel_ends_a_live_task_and_flags_the_worker,
    test_cancel_of_an_ended_task_returns_it_unchanged,
    test_cancel_of_an_unknown_task_is_none,
    test_completion_keeps_the_result,
    test_create_refuses_a_taken_id,
    test_list_gives_one_owners_live_tasks_newest_first,
    test_purge_forgets_expired_tasks_only,
    test_questions_accumulate_and_answers_resume_the_task,
    test_update_changes_the_given_fields_and_stamps_the_time,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
async def make_store(redis: Redis) -> AsyncIterator[Callable[[Clock], TaskStore]]:
    """A maker of empty Redis stores (a fresh key prefix each test), closed at the end."""
    prefix = f"tasks-{time.time_ns()}"
    made: list[RedisTaskStore] = []

    def make(moved: Clock) -> TaskStore:
        made.append(RedisTaskStore(redis.url, prefix=prefix, clock=moved))
        return made[-1]

    yield make
    for opened in made:
        await opened.__aexit__(None, None, None)


def _record(owner: str | None = "alice", ttl_ms: int | None = 60_000) -> TaskRecord:
    """A new working task of ``owner``, made now by the real clock."""
    now = Clock()
    now.now = time.time()
    return record(now, owner=owner, ttl_ms=ttl_ms)


def _live(redis: Redis, prefix: str, **options: object) -> RedisTaskStore:
    return RedisTaskStore(redis.url, prefix=prefix, **options)  # type: ignore[arg-type]


async def test_a_task_made_through_one_worker_is_steered_through_another(redis: Redis) -> None:
    """Two stores on one Redis (two workers) share a task: one makes it, the other ends it."""
    prefix = f"share-{time.time_ns()}"
    made = _record()
    with anyio.fail_after(20):
        async with _live(redis, prefix) as first, _live(redis, prefix) as second:
            await first.create(made)
            done = await second.update(made.task_id, status="completed", result={"x": []})
            assert done is not None
            assert await first.get(made.task_id) == done
            assert done.result == {"x": []}  # an empty list stays a list through Redis


async def test_racing_transitions_leave_one_terminal_status(redis: Redis) -> None:
    """A completion and a cancel racing from two workers: exactly one wins, for good."""
    prefix = f"race-{time.time_ns()}"
    with anyio.fail_after(30):
        async with _live(redis, prefix) as first, _live(redis, prefix) as second:
            for _ in range(20):
                made = _record()
                await first.create(made)
                outcomes: dict[str, TaskRecord | None] = {}

                async def complete(task_id: str = made.task_id, seen: Any = outcomes) -> None:
                    seen["completed"] = await first.update(task_id, status="completed")

                async def cancel(task_id: str = made.task_id, seen: Any = outcomes) -> None:
                    seen["cancelled"] = await second.request_cancel(task_id)

                async with anyio.create_task_group() as group:
                    group.start_soon(complete)
                    group.start_soon(cancel)
                final = await first.get(made.task_id)
                assert final is not None and final.terminal
                if final.status == "completed":
                    assert outcomes["completed"] == final
                    assert outcomes["cancelled"] == final  # cancel of an ended task: as it is
                else:
                    assert outcomes["completed"] is None


async def test_redis_forgets_a_task_after_its_ttl(redis: Redis) -> None:
    """A task's TTL is a Redis expiry: Redis itself drops the task, which reads as gone."""
    prefix = f"expiry-{time.time_ns()}"
    made = TaskRecord(**{**_fields(_record()), "ttl_ms": 150})
    with anyio.fail_after(20):
        async with _live(redis, prefix) as store:
            await store.create(made)
            client = store._link.client
            assert 0 < await client.pttl(f"{prefix}:task:{made.task_id}") <= 150
            while await client.exists(f"{prefix}:task:{made.task_id}"):
                await anyio.sleep(0.02)
            assert await store.get(made.task_id) is None
            assert await store.list("alice") == []


def _fields(made: TaskRecord) -> dict[str, Any]:
    return {name: getattr(made, name) for name in TaskRecord.__dataclass_fields__}


async def test_a_cancel_reaches_the_worker_watching_the_task(redis: Redis) -> None:
    """A cancel stored through one worker's store stops that task's watch on another's."""
    prefix = f"cancel-{time.time_ns()}"
    first, second = _record(), _record()
    with anyio.fail_after(20):
        async with _live(redis, prefix) as running, _live(redis, prefix) as other:
            await running.listening.wait()
            stopped = {first.task_id: anyio.Event(), second.task_id: anyio.Event()}
            for made in (first, second):
                await running.create(made)
                running.watch_cancel(made.task_id, stopped[made.task_id].set)
            await other.request_cancel(first.task_id)
            await stopped[first.task_id].wait()
            assert not stopped[second.task_id].is_set()
            await other.request_cancel(second.task_id)
            await stopped[second.task_id].wait()


async def test_list_pages_with_cursors_newest_first(redis: Redis) -> None:
    """Pages of two walk an owner's five tasks newest first, each once; a forged cursor fails."""
    prefix = f"pages-{time.time_ns()}"
    with anyio.fail_after(20):
        async with _live(redis, prefix) as store:
            made = []
            for at in range(5):
                one = _record()  # two by two at one instant: ties are paged too
                one = TaskRecord(
                    **{**_fields(one), "created_at": float(int(one.created_at) + at // 2)}
                )
                await store.create(one)
                made.append(one)
            await store.create(_record(owner="bob"))
            seen: list[str] = []
            cursor: str | None = None
            while True:
                page, cursor = await store.list_page("alice", cursor, limit=2)
                seen.extend(found.task_id for found in page)
                if cursor is None:
                    break
            assert sorted(seen) == sorted(one.task_id for one in made)
            assert len(seen) == len(set(seen)) == 5
            assert [one.task_id for one in await store.list("alice")] == seen
            created = [next(m.created_at for m in made if m.task_id == i) for i in seen]
            assert created == sorted(created, reverse=True)
            for forged in ("not-a-cursor", "bmFuIHg=", "YWJj"):  # "nan x", "abc"
                with pytest.raises(ValueError, match="unknown task cursor"):
                    await store.list_page("alice", forged)


async def test_a_task_whose_process_stopped_renewing_its_lease_reads_as_failed(
    redis: Redis,
) -> None:
    """While a process holds a task it reads as working; once its lease lapses unrenewed
    (the process was killed) the next read through any store fails it, for good."""
    prefix = f"lease-{time.time_ns()}"
    with anyio.fail_after(20):
        async with _live(redis, prefix, lease=0.3) as running, _live(redis, prefix) as other:
            made = _record()
            await running.create(made)
            async with running.holding(made.task_id):
                await anyio.sleep(0.5)  # past one lease: the renewals keep it
                found = await other.get(made.task_id)
                assert found is not None and found.status == "working"
            found = await other.get(made.task_id)
            assert found is not None and found.status == "working"  # released, not lost
            # What a killed process leaves: the mark that it held the task, no lease.
            await running._link.client.set(running._leases(made.task_id)[1], b"1")
            failed = await other.get(made.task_id)
            assert failed is not None and failed.status == "failed"
            assert failed.error is not None
            assert failed.error["message"] == "the worker running the task stopped before it ended"
            assert await other.update(made.task_id, status="completed") is None


async def test_a_task_whose_call_was_cancelled_with_its_process_reads_as_failed(
    redis: Redis,
) -> None:
    """A holding block left by a cancellation (the server stopping) fails the task at its
    next read, without waiting for the lease."""
    prefix = f"stopped-{time.time_ns()}"
    with anyio.fail_after(20):
        async with _live(redis, prefix) as store:
            made = _record()
            await store.create(made)
            with anyio.CancelScope() as stopping:
                async with store.holding(made.task_id):
                    stopping.cancel()
                    await anyio.sleep(5)
            found = await store.get(made.task_id)
            assert found is not None and found.status == "failed"


async def test_hostile_task_ids_read_as_unknown(redis: Redis) -> None:
    """Ids a client made up (huge, key patterns, other prefixes) are unknown tasks."""
    prefix = f"hostile-{time.time_ns()}"
    with anyio.fail_after(20):
        async with _live(redis, prefix) as store:
            made = _record()
            await store.create(made)
            for forged in ("x" * 100_000, "*", f"{made.task_id}*", "../" + made.task_id):
                assert await store.get(forged) is None
                assert await store.request_cancel(forged) is None
                assert await store.update(forged, status="completed") is None
            assert await store.get(made.task_id) == made


async def test_the_task_store_fails_closed_while_redis_is_unreachable() -> None:
    """Nothing listens on the port: reading a task raises instead of answering None."""
    with anyio.fail_after(20):
        async with RedisTaskStore(f"redis://127.0.0.1:{free_port()}/0") as store:
            with pytest.raises(TaskStoreUnavailable, match="Redis"):
                await store.get("any")
