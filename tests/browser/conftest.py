"""Fixtures of the browser suite: headless Chromium, the dev console in a subprocess, waits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.environment import CHROMEDRIVER, CHROMIUM, unavailable
from tests.browser.webdriver import WAIT, Browser
from tests.e2e.servers import stop

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ARTIFACTS = HERE / "artifacts"
"""Screenshots of each run (gitignored)."""

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1200",
)
_ANNOUNCED = re.compile(r"at (http://127\.0\.0\.1:\d+/\?token=\S+)")


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium through chromedriver, with a fresh profile; quit at the end."""
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not tool.is_file():
            unavailable(f"{tool} is missing: `make test` installs chromium and chromium-driver")
    profile = tmp_path_factory.mktemp("chromium-profile")
    driver = Browser(CHROMEDRIVER, CHROMIUM, [*FLAGS, f"--user-data-dir={profile}"])
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """The folder for this test's screenshots."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@contextmanager
def console(target: str, *extra: str, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Runs ``python -m mcpfusion._dev TARGET --port 0``; yields its URL, then stops it by PID."""
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpfusion._dev", target, "--port", "0", *extra],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={**os.environ, **(env or {})},
        )
        try:
            yield _announced(process, log)
        finally:
            stop(process)


def _announced(process: subprocess.Popen[Any], log: Any) -> str:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        found = _ANNOUNCED.search(text)
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"the console exited with {process.returncode}:\n{text}")
        time.sleep(0.05)
    raise TimeoutError(f"the console announced no URL in {WAIT} s")
