"""Starting and stopping the sample app's servers: subprocesses, uvicorn in-process, stdio."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from mcp import StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = f"{HERE / 'sample_app.py'}:app"
"""The sample app as the CLI names it."""

CLI_MODULE = (sys.executable, "-m", "mcpfusion.cli")
CLI_SCRIPT = str(Path(sys.executable).with_name("mcpfusion"))
"""The installed console script, next to the interpreter running the tests."""

_SERVING = re.compile(r"serving '[^']*' at (http://\S+)")


def require_npm(purpose: str) -> str:
    """The path of ``npm`` (and ``node`` is there too); without them the test skips, or
    fails with CI=true."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        reason = f"npm is not installed: {purpose} needs Node.js and npm"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: a missing tool is a failure)")
        pytest.skip(reason)
    return npm


def npm_install(scratch: Path, package: str, version: str, purpose: str) -> None:
    """Installs ``package@version`` from npm into ``scratch`` (git-ignored) unless it is
    there already; skips the test without npm (fails with CI=true)."""
    npm = require_npm(purpose)
    installed = scratch / "node_modules" / package / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != version:
        scratch.mkdir(exist_ok=True)
        (scratch / "package.json").write_text('{"private": true}\n')
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{package}@{version}"],
            cwd=scratch,
            check=True,
            capture_output=True,
            timeout=300,
        )


def stdio_params(*extra: str) -> StdioServerParameters:
    """Spawn parameters for ``mcpfusion run TARGET`` over stdio."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpfusion.cli", "run", TARGET, *extra], cwd=REPO
    )


def stop(process: subprocess.Popen[Any]) -> None:
    """Stops a server by its PID: SIGTERM, then SIGKILL if it is still up after 10 s."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@asynccontextmanager
async def http_server(*extra: str, target: str = TARGET) -> AsyncIterator[str]:
    """Runs ``mcpfusion run TARGET --http --port 0`` and yields its endpoint URL."""
    async with http_process(*extra, target=target) as (url, _):
        yield url


@asynccontextmanager
async def http_process(
    *extra: str, target: str = TARGET
) -> AsyncIterator[tuple[str, subprocess.Popen[Any]]]:
    """Like ``http_server``, yielding the URL and the server process."""
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            [*CLI_MODULE, "run", target, "--http", "--port", "0", *extra],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        try:
            url = await _announced_url(process, log)
            yield url, process
        finally:
            stop(process)


async def _announced_url(process: subprocess.Popen[Any], log: Any) -> str:
    with anyio.fail_after(30):
        while True:
            log.seek(0)
            text = log.read()
            found = _SERVING.search(text)
            if found:
                return found.group(1)
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}:\n{text}")
            await anyio.sleep(0.05)


@asynccontextmanager
async def uvicorn_in_process(app: Any) -> AsyncIterator[int]:
    """Serves an ASGI app (or a uvicorn.Config) with uvicorn in this event loop on a free
    port; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # kept bound from here on: no race for the port
    config = app if isinstance(app, uvicorn.Config) else uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve([sock])
        finally:
            stopped.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                with anyio.fail_after(10):
                    while not server.started:
                        await anyio.sleep(0.02)
                yield sock.getsockname()[1]
            finally:
                server.should_exit = True
                with anyio.move_on_after(10):
                    await stopped.wait()
                group.cancel_scope.cancel()
    finally:
        sock.close()


def run_cli(*args: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs the installed ``mcpfusion`` script; output is captured as text."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [CLI_SCRIPT, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
        **kwargs,
    )
