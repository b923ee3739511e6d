"""`mcpfusion run --workers N`: N processes on one socket, the lifespan once in each, and a
graceful stop on SIGTERM (the call in flight finishes, new connections are refused)."""

from __future__ import annotations

import re
import signal
import socket
import time
from pathlib import Path

import anyio
import pytest

from tests.scale import load
from tests.scale.services import cli, replicas

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


async def test_workers_share_a_socket_and_stop_gracefully(folder: Path) -> None:
    """2 workers: two lifespans; SIGTERM lets a 2 s call finish and refuses new connections."""
    command = cli("tests.scale.apps:slow", "--stateless", "--shutdown-timeout", "10", workers=2)
    with replicas([command], folder) as (server,):
        url = f"http://127.0.0.1:{server.port}/mcp"
        started = re.findall(r"lifespan started in (\d+)", server.output())
        assert len(set(started)) == 2
        answer: dict[str, object] = {}
        finished = refused_at = 0.0
        async with load.http_client() as http:

            async def slow_call() -> None:
                nonlocal finished
                arguments = {"count": 10, "pause": 0.2}
                answer.update(await load.call_tool(http, url, 1, "work_steps", arguments))
                finished = time.perf_counter()

            async with anyio.create_task_group() as group:
                group.start_soon(slow_call)
                await anyio.sleep(0.5)
                server.process.send_signal(signal.SIGTERM)
                with anyio.fail_after(10):
                    while not refused(server.port):
                        await anyio.sleep(0.05)
                refused_at = time.perf_counter()
            assert answer and not answer.get("isError"), answer
            text = answer["content"][0]["text"]  # type: ignore[index]
            assert text.startswith("done 10 in ")
            assert text.split()[-1] in started
        with anyio.fail_after(20):
            while server.process.poll() is None:
                await anyio.sleep(0.05)
        assert server.process.returncode == 0
        assert refused_at < finished  # new connections refused while the call ran on
        stopped = re.findall(r"lifespan stopped in (\d+)", server.output())
        assert sorted(stopped) == sorted(started)
