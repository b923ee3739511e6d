"""A small W3C WebDriver client for chromedriver, on the standard library alone.

Selenium would bring trio and sniffio into the test environment, and with sniffio installed
anyio's test runner reports a running loop to the e2e suite's synchronous ``anyio.run``.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
"""The key of an element reference in WebDriver JSON."""

WAIT = 30.0
"""Seconds any one wait may take."""


class WebDriverError(RuntimeError):
    """chromedriver answered a command with an error."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Browser:
    """One Chromium session through a chromedriver this process started (stopped by PID)."""

    def __init__(self, driver: Path, chromium: Path, flags: Sequence[str]) -> None:
        port = _free_port()
        self._process = subprocess.Popen(
            [str(driver), f"--port={port}", "--allowed-ips=127.0.0.1"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._base = f"http://127.0.0.1:{port}"
        self._session = ""
        try:
            self._wait_ready()
            options = {"binary": str(chromium), "args": list(flags)}
            capabilities = {"alwaysMatch": {"goog:chromeOptions": options}}
            created = self._call("POST", "/session", {"capabilities": capabilities})
            self._session = f"/session/{created['sessionId']}"
            ms = int(WAIT * 1000)
            self._call("POST", f"{self._session}/timeouts", {"script": ms, "pageLoad": ms})
        except BaseException:
            self.quit()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                if self._call("GET", "/status").get("ready"):
                    return
            except OSError:
                pass
            if self._process.poll() is not None:
                raise WebDriverError(f"chromedriver exited with {self._process.returncode}")
            time.sleep(0.05)
        raise TimeoutError(f"chromedriver was not ready in {WAIT} s")

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self._base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=WAIT * 2) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as exc:
            value = json.loads(exc.read() or b"{}").get("value", {})
            raise WebDriverError(f"{value.get('error')}: {value.get('message')}") from None

    def command(self, method: str, path: str, body: Any = None) -> Any:
        """Sends one command of the session (``path`` after ``/session/{id}``)."""
        return self._call(method, self._session + path, body)

    def get(self, url: str) -> None:
        """Navigates to ``url`` and waits for it to load."""
        self.command("POST", "/url", {"url": url})

    def execute(self, script: str, *args: Any) -> Any:
        """Runs a function body in the page; returns its value."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def execute_async(self, script: str, *args: Any) -> Any:
        """Runs a function body that calls its last argument with the result."""
        return self.command("POST", "/execute/async", {"script": script, "args": list(args)})

    def find(self, css: str, within: str | None = None) -> str:
        """The first element matching ``css`` (inside ``within``), as a reference id."""
        path = f"/element/{within}/element" if within else "/element"
        found = self.command("POST", path, {"using": "css selector", "value": css})
        element: str = found[ELEMENT]
        return element

    def click(self, element: str) -> None:
        """Clicks an element the way a person would."""
        self.command("POST", f"/element/{element}/click", {})

    def type(self, element: str, text: str) -> None:
        """Types ``text`` into an input."""
        self.command("POST", f"/element/{element}/value", {"text": text})

    def frame(self, element: str | None) -> None:
        """Switches into an iframe element, or back to the top page with ``None``."""
        target = None if element is None else {ELEMENT: element}
        self.command("POST", "/frame", {"id": target})

    def screenshot(self, path: Path) -> None:
        """Saves a PNG of the viewport."""
        path.write_bytes(base64.b64decode(self.command("GET", "/screenshot")))

    def wait_until(self, script: str, *args: Any, timeout: float = WAIT) -> Any:
        """Runs ``script`` until it returns something truthy; returns that (bounded)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.execute(script, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for: {script}")
            time.sleep(0.05)

    def quit(self) -> None:
        """Ends the session, then stops chromedriver by its PID."""
        try:
            if self._session:
                self._call("DELETE", self._session)
        except (OSError, WebDriverError):
            pass  # the driver is stopped below either way
        finally:
            if self._process.poll() is None:
                os.kill(self._process.pid, signal.SIGTERM)
                try:
                    self._process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.kill(self._process.pid, signal.SIGKILL)
                    self._process.wait(timeout=10)
