"""The ``TaskStore`` contract, run against ``MemoryTaskStore``.

Another store (Redis) runs the same tests by adding itself to the ``make_store`` fixture:
each test gets a store reading time from a clock it can move.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcpfusion._tasks.store import (
    TERMINAL_STATUSES,
    MemoryTaskStore,
    TaskRecord,
    TaskStatus,
    TaskStore,
    new_task_id,
)

pytestmark = pytest.mark.anyio


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """A fresh hand-moved clock."""
    return Clock()


@pytest.fixture(params=["memory"])
def make_store(request: pytest.FixtureRequest) -> Callable[[Clock], TaskStore]:
    """A maker of empty stores of each kind, on a given clock."""
    assert request.param == "memory"
    return lambda clock: MemoryTaskStore(clock=clock)


@pytest.fixture
def store(make_store: Callable[[Clock], TaskStore], clock: Clock) -> TaskStore:
    """An empty store on the test's clock."""
    return make_store(clock)


def record(clock: Clock, *, owner: str | None = "alice", ttl_ms: int | None = 60_000) -> TaskRecord:
    """A new working task of ``owner``, made now."""
    return TaskRecord(
        task_id=new_task_id(),
        owner=owner,
        params={"name": "jobs", "arguments": {"action": "export"}},
        status="working",
        created_at=clock.now,
        updated_at=clock.now,
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
    )


async def test_a_created_task_is_readable_at_once(store: TaskStore, clock: Clock) -> None:
    """A task is readable by its id as soon as ``create`` returns, with what was stored."""
    made = record(clock)
    await store.create(made)
    assert await store.get(made.task_id) == made


async def test_an_unknown_id_reads_as_none(store: TaskStore) -> None:
    """An id no task has reads as ``None``."""
    assert await store.get("no-such-task") is None


async def test_create_refuses_a_taken_id(store: TaskStore, clock: Clock) -> None:
    """Creating a second task under an existing id raises instead of overwriting."""
    made = record(clock)
    await store.create(made)
    with pytest.raises(ValueError, match="exists"):
        await store.create(made)


async def test_update_changes_the_given_fields_and_stamps_the_time(
    store: TaskStore, clock: Clock
) -> None:
    """``update`` sets the fields given, keeps the others, and moves ``updated_at``."""
    made = record(clock)
    await store.create(made)
    clock.now += 5
    changed = await store.update(
        made.task_id, status_message="half way", progress={"progress": 5, "total": 10}
    )
    assert changed is not None
    assert (changed.status, changed.status_message) == ("working", "half way")
    assert changed.progress == {"progress": 5, "total": 10}
    assert changed.updated_at == clock.now
    assert changed.created_at == made.created_at
    assert await store.get(made.task_id) == changed


async def test_update_refuses_a_change_it_does_not_know(store: TaskStore, clock: Clock) -> None:
    """A keyword outside ``TaskChange`` is a ``TypeError``, not a silent change of the record."""
    made = record(clock)
    await store.create(made)
    with pytest.raises(TypeError, match="cancel_requested"):
        await store.update(made.task_id, cancel_requested=True)  # type: ignore[call-arg]
    assert await store.get(made.task_id) == made


async def test_update_with_only_nones_changes_nothing_but_the_time(
    store: TaskStore, clock: Clock
) -> None:
    """A change given as ``None`` leaves its field as it was (``TaskChange``'s rule)."""
    made = record(clock)
    await store.create(made)
    clock.now += 1
    changed = await store.update(made.task_id, status=None, progress=None, result=None)
    assert changed is not None
    assert (changed.status, changed.progress, changed.result) == ("working", None, None)
    assert changed.updated_at == clock.now


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
async def test_a_terminal_task_never_changes_again(
    store: TaskStore, clock: Clock, terminal: TaskStatus
) -> None:
    """Once completed, failed or cancelled, a task refuses every update (``None``)."""
    made = record(clock)
    await store.create(made)
    ended = await store.update(made.task_id, status=terminal)
    assert ended is not None
    assert await store.update(made.task_id, status="completed", result={"content": []}) is None
    assert await store.update(made.task_id, status_message="late") is None
    assert await store.answer(made.task_id, {"q": {}}) is None
    assert await store.get(made.task_id) == ended


async def test_completion_keeps_the_result(store: TaskStore, clock: Clock) -> None:
    """A completed task carries the result it completed with."""
    made = record(clock)
    await store.create(made)
    result = {"content": [{"type": "text", "text": "done"}], "isError": False}
    await store.update(made.task_id, status="completed", result=result)
    found = await store.get(made.task_id)
    assert found is not None
    assert (found.status, found.result, found.error) == ("completed", result, None)


async def test_cancel_ends_a_live_task_and_flags_the_worker(store: TaskStore, clock: Clock) -> None:
    """Cancelling a live task makes it ``cancelled`` with ``cancel_requested`` for its worker."""
    made = record(clock)
    await store.create(made)
    cancelled = await store.request_cancel(made.task_id)
    assert cancelled is not None
    assert (cancelled.status, cancelled.cancel_requested) == ("cancelled", True)
    assert await store.update(made.task_id, status="completed", result={"content": []}) is None


async def test_cancel_of_an_ended_task_returns_it_unchanged(store: TaskStore, clock: Clock) -> None:
    """Cancelling a completed task is idempotent: the record comes back as it was."""
    made = record(clock)
    await store.create(made)
    done = await store.update(made.task_id, status="completed", result={"content": []})
    assert await store.request_cancel(made.task_id) == done


async def test_cancel_of_an_unknown_task_is_none(store: TaskStore) -> None:
    """Cancelling an id no task has returns ``None``."""
    assert await store.request_cancel("no-such-task") is None


async def test_questions_accumulate_and_answers_resume_the_task(
    store: TaskStore, clock: Clock
) -> None:
    """Parallel questions add up; a partial answer keeps ``input_required``, the last resumes."""
    made = record(clock)
    await store.create(made)
    await store.update(made.task_id, status="input_required", add_input_requests={"a": {"n": 1}})
    asked = await store.update(made.task_id, add_input_requests={"b": {"n": 2}})
    assert asked is not None
    assert dict(asked.input_requests) == {"a": {"n": 1}, "b": {"n": 2}}
    partial = await store.answer(made.task_id, {"a": {"action": "accept"}, "stray": {}})
    assert partial is not None
    assert (partial.status, dict(partial.input_requests)) == ("input_required", {"b": {"n": 2}})
    assert dict(partial.input_responses) == {"a": {"action": "accept"}}
    resumed = await store.answer(made.task_id, {"b": {"action": "decline"}})
    assert resumed is not None
    assert (resumed.status, dict(resumed.input_requests)) == ("working", {})
    assert set(resumed.input_responses) == {"a", "b"}


async def test_a_task_lives_for_its_ttl_after_its_last_change(
    store: TaskStore, clock: Clock
) -> None:
    """A task stays readable for ``ttl_ms`` after it last changed, and is gone after."""
    made = record(clock, ttl_ms=10_000)
    await store.create(made)
    clock.now += 8
    await store.update(made.task_id, status="completed", result={"content": []})
    clock.now += 9.9
    assert await store.get(made.task_id) is not None
    clock.now += 0.2
    assert await store.get(made.task_id) is None
    assert await store.update(made.task_id, status_message="late") is None
    assert await store.request_cancel(made.task_id) is None


async def test_purge_forgets_expired_tasks_only(store: TaskStore, clock: Clock) -> None:
    """``purge_expired`` removes the expired tasks, counts them, and keeps the rest."""
    short, long, forever = (record(clock, ttl_ms=ttl) for ttl in (1_000, 100_000, None))
    for made in (short, long, forever):
        await store.create(made)
    clock.now += 2
    assert await store.purge_expired() == 1
    assert await store.get(short.task_id) is None
    assert await store.get(long.task_id) is not None
    assert await store.get(forever.task_id) is not None


async def test_list_gives_one_owners_live_tasks_newest_first(
    store: TaskStore, clock: Clock
) -> None:
    """``list`` returns only the owner's unexpired tasks, the newest first."""
    first = record(clock)
    clock.now += 1
    second = record(clock)
    others = record(clock, owner="bob")
    anonymous = record(clock, owner=None)
    for made in (first, second, others, anonymous):
        await store.create(made)
    assert [found.task_id for found in await store.list("alice")] == [
        second.task_id,
        first.task_id,
    ]
    assert [found.task_id for found in await store.list(None)] == [anonymous.task_id]
    clock.now += 61
    assert await store.list("alice") == []


def test_task_ids_are_unguessable_and_distinct() -> None:
    """Task ids are long random URL-safe strings, never repeated."""
    ids = {new_task_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(task_id) >= 22 and task_id.isascii() for task_id in ids)
