"""The real services of the scale-out suite: redis-server, nginx and server replicas.

Each runs as a subprocess on 127.0.0.1, on a port chosen at run time, and is stopped by
its own PID (a replica by its process group, which it leads). Every wait is bounded.
``make test`` installs redis-server and nginx where missing; without them the suite is
skipped, or fails with CI=true.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "nginx"
EXAMPLE_REPLICAS = ("10.0.0.11:8000", "10.0.0.12:8000", "10.0.0.13:8000")
"""The replica addresses the deploy/ files are written with, replaced by the tests'."""

_SERVING = re.compile(r"serving '[^']*' at http://127\.0\.0\.1:(\d+)/mcp")


def binary(name: str) -> str:
    """The path of a service's executable; skips the test without it (fails with CI=true)."""
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()),
        None,
    )
    if found is None:
        message = f"{name} is not installed (make test installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def free_port() -> int:
    """A port free on 127.0.0.1 now (for services that bind it themselves)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 20) -> None:
    """Waits until ``port`` accepts connections; raises if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


def stop_process(process: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    """Stops a process by PID: ``sig``, then SIGKILL after 15 s."""
    if process.poll() is None:
        os.kill(process.pid, sig)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


class Redis:
    """A redis-server without persistence; ``restart`` brings it back on the same port."""

    def __init__(self, folder: Path) -> None:
        self.executable = binary("redis-server")
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[Any] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / "redis.log", "ab") as log:
            self.process = subprocess.Popen(
                [
                    self.executable,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.folder),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def redis_server(folder: Path) -> Iterator[Redis]:
    """A running Redis, stopped at the end."""
    server = Redis(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def render(conf: str, replicas: Sequence[int], listen: int) -> str:
    """A deploy/nginx file for replicas on these local ports, listening on ``listen``."""
    text = (DEPLOY / conf).read_text()
    if len(replicas) != len(EXAMPLE_REPLICAS):
        raise ValueError(f"the deploy files name {len(EXAMPLE_REPLICAS)} replicas")
    for example, port in zip(EXAMPLE_REPLICAS, replicas, strict=True):
        text = text.replace(example, f"127.0.0.1:{port}")
        text = text.replace(re.escape(example), re.escape(f"127.0.0.1:{port}"))
    return text.replace("listen 8080;", f"listen 127.0.0.1:{listen};")


@contextmanager
def nginx(folder: Path, conf: str, replicas: Sequence[int]) -> Iterator[int]:
    """nginx serving ``deploy/nginx/<conf>`` in front of the replicas; yields its port."""
    executable = binary("nginx")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (folder / "site.conf").write_text(render(conf, replicas, port))
    user = "user root;\n" if os.geteuid() == 0 else ""
    (folder / "nginx.conf").write_text(
        f"{user}daemon off;\nworker_processes 2;\npid {folder}/nginx.pid;\n"
        f"error_log {folder}/error.log warn;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        "    access_log off;\n"
        f"    client_body_temp_path {folder}/body;\n"
        f"    proxy_temp_path {folder}/proxy;\n"
        f"    fastcgi_temp_path {folder}/fastcgi;\n"
        f"    uwsgi_temp_path {folder}/uwsgi;\n"
        f"    scgi_temp_path {folder}/scgi;\n"
        f"    include {folder}/site.conf;\n"
        "}\n"
    )
    with open(folder / "stderr.log", "ab") as log:
        process = subprocess.Popen(
            [executable, "-p", str(folder), "-c", str(folder / "nginx.conf")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        wait_for_port(port, process)
        yield port
    finally:
        stop_process(process, signal.SIGQUIT)  # graceful: finishes what it proxies


class Replica:
    """A server process (the leader of its own process group) and the port it announced."""

    def __init__(self, command: Sequence[str], log: IO[str]) -> None:
        self.log = log
        self.process = subprocess.Popen(
            list(command),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        self.port = 0

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.output()
            found = _SERVING.search(text)
            if found and text.count("Application startup complete") >= self.workers:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"the replica exited with {self.process.returncode}:\n{text}")
            time.sleep(0.05)
        raise TimeoutError(f"the replica did not start in {timeout} s:\n{self.output()}")

    @property
    def workers(self) -> int:
        args = [str(arg) for arg in self.process.args]  # type: ignore[union-attr]
        return int(args[args.index("--workers") + 1]) if "--workers" in args else 1

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def signal_group(self, sig: int) -> None:
        """Sends ``sig`` to the replica and its workers (its process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)

    def stop(self) -> None:
        if self.process.poll() is None:
            stop_process(self.process)
        # Workers of a replica killed outright are orphans of its group: end them too.
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


@contextmanager
def replicas(commands: Sequence[Sequence[str]], folder: Path) -> Iterator[list[Replica]]:
    """Starts every command as a replica, waits until all serve, stops them at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    started: list[Replica] = []
    try:
        for index, command in enumerate(commands):
            log = open(folder / f"replica{index}.log", "w+")  # noqa: SIM115 - closed below
            started.append(Replica(command, log))
        for replica in started:
            replica.wait_ready()
        yield started
    finally:
        for replica in started:
            replica.stop()
            replica.log.close()


def billing(db: Path, *extra: str, workers: int = 2) -> list[str]:
    """The command of one billing replica on a free port."""
    return [
        sys.executable,
        "-m",
        "examples.billing",
        "--http",
        "--port",
        "0",
        "--db",
        str(db),
        "--workers",
        str(workers),
        *extra,
    ]


def cli(target: str, *extra: str, workers: int = 1) -> list[str]:
    """The command of ``mcpfusion run TARGET --http`` on a free port."""
    return [
        sys.executable,
        "-m",
        "mcpfusion.cli",
        "run",
        target,
        "--http",
        "--port",
        "0",
        "--workers",
        str(workers),
        *extra,
    ]


@contextmanager
def queue_workers(
    redis: Redis, queue: str, folder: Path, count: int, *extra: str
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` queue workers (``mcpfusion worker``) of ``tests/scale/task_app.py`` on
    ``queue``, each the leader of its process group, beating every 2 s: a killed one's
    task is taken back within about 4 s."""
    folder.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []
    try:
        for index in range(count):
            with open(folder / f"worker{index}.log", "ab") as log:
                command = [
                    sys.executable,
                    "-m",
                    "mcpfusion.cli",
                    "worker",
                    f"{REPO / 'tests' / 'scale' / 'task_app.py'}:app",
                    "--redis-url",
                    redis.url,
                    "--queue",
                    queue,
                    "--concurrency",
                    "2",
                    "--heartbeat",
                    "2",
                    *extra,
                ]
                started.append(
                    subprocess.Popen(
                        command,
                        cwd=REPO,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                        start_new_session=True,
                    )
                )
        yield started
    finally:
        for process in started:
            stop_process(process)
