"""Where a served app's tasks run, as options and flags choose: memory, Redis, a queue."""

from __future__ import annotations

import pickle

import pytest

from mcpfusion import HttpOptions
from mcpfusion._serve.task_placement import task_runner
from mcpfusion._serve.task_queue import QueueTaskRunner
from mcpfusion._tasks.watched import WatchedTaskRunner
from mcpfusion.cli import build_parser, http_options, main
from mcpfusion.redis import RedisTaskStore

NOWHERE = "redis://127.0.0.1:1/0"


def test_tasks_run_in_process_by_default() -> None:
    """Without a task store or queue the server keeps its default in-process runner."""
    assert task_runner(HttpOptions()) is None


def test_a_redis_store_runs_calls_here_and_hears_cancels_from_other_workers() -> None:
    """A RedisTaskStore alone: calls run in the web worker, watched for remote cancels."""
    assert isinstance(
        task_runner(HttpOptions(task_store=RedisTaskStore(NOWHERE))), WatchedTaskRunner
    )


def test_task_queue_hands_calls_to_queue_workers_on_the_stores_redis() -> None:
    """task_queue=True: the runner queues calls in the Redis the store uses."""
    runner = task_runner(HttpOptions(task_store=RedisTaskStore(NOWHERE), task_queue=True))
    assert isinstance(runner, QueueTaskRunner)
    assert runner.store.url == NOWHERE


def test_task_queue_without_a_redis_store_is_refused() -> None:
    """A queue needs a Redis to live in: task_queue without a RedisTaskStore fails at once."""
    with pytest.raises(ValueError, match="task_queue needs a task_store in Redis"):
        HttpOptions(task_queue=True)


def test_a_task_store_must_be_one() -> None:
    """Something without the store's methods is refused as task_store."""
    with pytest.raises(TypeError, match="task_store must have create"):
        HttpOptions(task_store=object())  # type: ignore[arg-type]  # the mistake under test


def test_redis_url_shares_tasks_and_task_queue_queues_them() -> None:
    """--redis-url puts tasks in Redis; --task-queue sends their calls to queue workers."""
    base = ["run", "x:app", "--http", "--redis-url", NOWHERE]
    shared = http_options(build_parser().parse_args(base))
    assert isinstance(shared.task_store, RedisTaskStore) and not shared.task_queue
    queued = http_options(build_parser().parse_args([*base, "--task-queue"]))
    assert queued.task_queue is True
    with pytest.raises(ValueError, match="task_queue needs a task_store"):
        http_options(build_parser().parse_args(["run", "x:app", "--http", "--task-queue"]))


def test_task_queue_needs_http(capsys: pytest.CaptureFixture[str]) -> None:
    """--task-queue over stdio is a usage error, before the target is loaded."""
    assert main(["run", "no_such_module:app", "--task-queue"]) == 2
    assert "--task-queue apply to --http only" in capsys.readouterr().err


def test_task_options_reach_workers_pickled() -> None:
    """The task store and the queue runner pickle as their arguments, for run_workers."""
    options = HttpOptions(task_store=RedisTaskStore(NOWHERE, prefix="p"), task_queue=True)
    copy = pickle.loads(pickle.dumps(options))
    assert isinstance(copy.task_store, RedisTaskStore)
    assert (copy.task_store.url, copy.task_store.prefix, copy.task_queue) == (NOWHERE, "p", True)
    runner = pickle.loads(pickle.dumps(QueueTaskRunner(RedisTaskStore(NOWHERE), queue="q")))
    assert (runner.store.url, runner.queue) == (NOWHERE, "q")
