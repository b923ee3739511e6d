"""The lifespan runs once per server process and shuts down on SIGTERM (subprocess tests)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.client_results import first_text
from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TARGET = f"{servers.HERE / 'lifespan_app.py'}:app"


async def wait_for(log: Path, text: str) -> None:
    """Waits (bounded by the caller) until ``log`` contains ``text``."""
    while not (log.exists() and text in log.read_text()):
        await anyio.sleep(0.02)


def events(log: Path) -> list[str]:
    """The recorded events, without the PIDs."""
    return [line.split()[0] for line in log.read_text().splitlines()]


async def test_stdio_server_shuts_its_lifespan_down_on_sigterm(tmp_path: Path) -> None:
    """Over stdio: started once before serving, stopped once on SIGTERM; exit status 0."""
    log = tmp_path / "lifespan.log"
    with subprocess.Popen(
        [*servers.CLI_MODULE, "run", TARGET],
        cwd=servers.REPO,
        stdin=subprocess.PIPE,  # kept open: the server serves until the signal
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LIFESPAN_LOG": str(log)},
    ) as process:
        try:
            with anyio.fail_after(30):
                await wait_for(log, "start")
                os.kill(process.pid, signal.SIGTERM)
                await anyio.to_thread.run_sync(process.wait)
                await wait_for(log, "stop")
        finally:
            servers.stop(process)
    assert process.returncode == 0
    assert events(log) == ["start", "stop"]


async def test_a_sigterm_while_the_lifespan_starts_still_runs_its_shutdown(
    tmp_path: Path,
) -> None:
    """Over stdio: a signal during the lifespan's start stops it too; exit status 0."""
    log = tmp_path / "lifespan.log"
    with subprocess.Popen(
        [*servers.CLI_MODULE, "run", TARGET],
        cwd=servers.REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LIFESPAN_LOG": str(log), "LIFESPAN_START_SECONDS": "30"},
    ) as process:
        try:
            with anyio.fail_after(30):
                await wait_for(log, "start")
                os.kill(process.pid, signal.SIGTERM)
                await anyio.to_thread.run_sync(process.wait)
        finally:
            servers.stop(process)
    assert process.returncode == 0
    assert events(log) == ["start", "stop"]


async def test_http_server_runs_the_lifespan_once_and_stops_on_sigterm(tmp_path: Path) -> None:
    """Over HTTP: one start for many sessions sharing the state, one stop on SIGTERM."""
    log = tmp_path / "lifespan.log"
    os.environ["LIFESPAN_LOG"] = str(log)
    try:
        with anyio.fail_after(60):
            async with servers.http_server("--stateless", target=TARGET) as url:
                for _ in range(3):
                    async with Client(url) as client:
                        assert first_text(await client.call_tool("ops_ping", {})) == "pong"
                assert events(log) == ["start"]
            await wait_for(log, "stop")
    finally:
        del os.environ["LIFESPAN_LOG"]
    assert events(log) == ["start", "stop"]
