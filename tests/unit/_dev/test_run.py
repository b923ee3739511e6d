"""``mcpfusion run``: the transport, the page size and the HTTP flags reaching the server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpfusion import HttpOptions
from mcpfusion._app.app import Fusion
from mcpfusion.cli import load_app, main

APP_SOURCE = """
from mcpfusion import Fusion

app = Fusion("tiny")
app.tool("t").action("ping")(lambda: "pong")
"""


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A file target for a small app, imported under a fresh module name."""
    path = tmp_path / "tinyrunapp.py"
    path.write_text(APP_SOURCE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "tinyrunapp", raising=False)
    return f"{path}:app"


def test_run_chooses_the_transport_through_fusion_run(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run`` serves through ``Fusion.run``: stdio by default, HTTP with ``--http``."""
    calls: list[tuple[str, HttpOptions | None]] = []

    def record(self: Fusion, transport: str = "stdio", options: HttpOptions | None = None) -> None:
        calls.append((transport, options))

    monkeypatch.setattr(Fusion, "run", record)
    assert main(["run", target]) == 0
    assert main(["run", target, "--http", "--port", "0", "--path", "/x", "--stateless"]) == 0
    assert [transport for transport, _ in calls] == ["stdio", "http"]
    http = calls[1][1]
    assert http is not None
    assert (http.port, http.path, http.stateless) == (0, "/x", True)


def test_page_size_reaches_the_app_on_every_transport(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--page-size N`` sets the served app's page size, over stdio and HTTP alike, and
    a size that is not a positive int is a usage error."""
    sizes: list[int | None] = []

    def record(self: Fusion, transport: str = "stdio", options: HttpOptions | None = None) -> None:
        sizes.append(self.page_size)

    monkeypatch.setattr(Fusion, "run", record)
    monkeypatch.setattr(load_app(target), "page_size", None)  # restored for later tests
    assert main(["run", target]) == 0  # the app's own: none
    assert main(["run", target, "--page-size", "3"]) == 0
    assert main(["run", target, "--http", "--page-size", "7"]) == 0
    assert sizes == [None, 3, 7]
    for bad in ("0", "-2", "x"):
        with pytest.raises(SystemExit, match="2"):
            main(["run", target, "--page-size", bad])
    assert "--page-size: invalid" in capsys.readouterr().err


def test_run_http_passes_allowed_hosts_and_origins(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--allowed-host`` and ``--allowed-origin`` repeat and reach the HTTP server."""
    calls: list[HttpOptions] = []
    monkeypatch.setattr("mcpfusion.server.run_http", lambda app, options: calls.append(options))
    words = ["--allowed-host", "a.example:*", "--allowed-host", "b.example"]
    assert main(["run", target, "--http", "--host", "0.0.0.0", *words]) == 0
    assert main(["run", target, "--http", "--allowed-origin", "https://ui.example"]) == 0
    first, second = calls
    assert first.host == "0.0.0.0"
    assert first.allowed_hosts == ("a.example:*", "b.example")
    assert first.allowed_origins is None
    assert (second.allowed_hosts, second.allowed_origins) == (None, ("https://ui.example",))
