"""The ``mcpfusion worker`` subcommand: its flags and the mistakes it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpfusion._serve.task_queue import DEFAULT_QUEUE, TaskWorker
from mcpfusion.cli import USAGE_ERROR, build_parser, main
from tests.scale.task_app import app

APP = str(Path(__file__).resolve().parents[2] / "scale" / "task_app.py") + ":app"


def test_the_worker_flags_default_to_a_safe_worker() -> None:
    """Without flags a worker reads the default queue, 10 tasks at once, and never retries."""
    args = build_parser().parse_args(["worker", APP, "--redis-url", "redis://127.0.0.1:1/0"])
    assert (args.queue, args.concurrency, args.retries, args.heartbeat) == (None, 10, 0, 10)
    assert args.task_timeout == 300.0


def test_the_worker_needs_a_redis_url(capsys: pytest.CaptureFixture[str]) -> None:
    """``mcpfusion worker`` without ``--redis-url`` is a usage error naming the flag."""
    with pytest.raises(SystemExit, match="2"):
        main(["worker", APP])
    assert "--redis-url" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--concurrency", "--retries", "--heartbeat"])
def test_the_worker_refuses_impossible_numbers(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A zero concurrency or heartbeat, or negative retries, is refused before serving."""
    value = "-1" if flag == "--retries" else "0"
    argv = ["worker", APP, "--redis-url", "redis://127.0.0.1:1/0", flag, value]
    assert main(argv) == USAGE_ERROR
    assert "concurrency >= 1" in capsys.readouterr().err


def test_a_task_worker_reads_the_default_queue_through_a_store_on_its_url() -> None:
    """A ``TaskWorker`` made with a URL alone keeps its tasks in a Redis store on that URL."""
    worker = TaskWorker(app, "redis://127.0.0.1:1/0")
    assert (worker.queue, worker.store.prefix) == (DEFAULT_QUEUE, "mcpfusion")
