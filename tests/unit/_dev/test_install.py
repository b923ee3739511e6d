"""``mcpfusion install``: each client's entry, merging, refusing, and the dry run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfusion._dev.install import default_config_path, merged_config, server_entry
from mcpfusion._dev.target import UsageError
from mcpfusion.cli import main

APP = '''
from mcpfusion import Fusion

app = Fusion("installed")
tool = app.tool("t", description="T.")


@tool.action(read_only=True)
def ping() -> str:
    """Answers pong."""
    return "pong"
'''


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    """A one-tool app in a file."""
    path = tmp_path / "installapp.py"
    path.write_text(APP, encoding="utf-8")
    return path


def test_each_client_has_its_documented_config_file(tmp_path: Path) -> None:
    """Claude Desktop's file depends on the platform; Cursor's is per user."""
    mac = default_config_path("claude-desktop", home=tmp_path, platform="darwin")
    assert mac == tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"
    windows = default_config_path(
        "claude-desktop", home=tmp_path, platform="win32", environ={"APPDATA": "C:/AppData"}
    )
    assert windows == Path("C:/AppData/Claude/claude_desktop_config.json")
    assert default_config_path("cursor", home=tmp_path) == tmp_path / ".cursor/mcp.json"
    assert default_config_path("vscode").name == "mcp.json"
    assert default_config_path("claude-code").name == ".mcp.json"


def test_the_entry_runs_the_absolute_interpreter_on_an_absolute_target(tmp_path: Path) -> None:
    """A file target is made absolute and started with this interpreter's absolute path."""
    entry = server_entry("cursor", "app.py:app", env={"TOKEN": "x"}, cwd=tmp_path)
    assert entry == {
        "command": str(Path(sys.executable).absolute()),
        "args": ["-m", "mcpfusion.cli", "run", f"{(tmp_path / 'app.py').resolve()}:app"],
        "env": {"TOKEN": "x"},
    }


def test_a_module_target_carries_its_directory_and_typed_clients_a_type(tmp_path: Path) -> None:
    """A module target gets PYTHONPATH; VS Code and Claude Code entries say stdio."""
    entry = server_entry("vscode", "pkg.app:app", cwd=tmp_path)
    assert entry["type"] == "stdio"
    assert entry["args"][-1] == "pkg.app:app"
    assert entry["env"] == {"PYTHONPATH": str(tmp_path.resolve())}


def test_merging_keeps_the_other_servers_and_keys(tmp_path: Path) -> None:
    """Another server and an unrelated setting survive the install."""
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}),
        encoding="utf-8",
    )
    config = merged_config("claude-desktop", path, "mine", {"command": "python"})
    assert config == {
        "theme": "dark",
        "mcpServers": {"other": {"command": "other-server"}, "mine": {"command": "python"}},
    }


def test_an_unparsable_or_foreign_file_is_refused(tmp_path: Path) -> None:
    """A file that is not a JSON object of servers is left alone with an error."""
    path = tmp_path / "config.json"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(UsageError, match="is not valid JSON"):
        merged_config("cursor", path, "mine", {})
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(UsageError, match="holds a JSON list, not an object"):
        merged_config("cursor", path, "mine", {})
    path.write_text('{"servers": []}', encoding="utf-8")
    with pytest.raises(UsageError, match="'servers' is a JSON list, not an object"):
        merged_config("vscode", path, "mine", {})


def test_another_server_of_the_same_name_is_replaced_only_by_force(tmp_path: Path) -> None:
    """A same-named, different server is refused unless forced; the same entry is idempotent."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {"mine": {"command": "else"}}}), encoding="utf-8")
    with pytest.raises(UsageError, match="already has a server named 'mine'"):
        merged_config("cursor", path, "mine", {"command": "python"})
    forced = merged_config("cursor", path, "mine", {"command": "python"}, force=True)
    assert forced["mcpServers"]["mine"] == {"command": "python"}
    same = merged_config("cursor", path, "mine", {"command": "else"})
    assert same["mcpServers"]["mine"] == {"command": "else"}


def test_install_writes_and_dry_run_only_prints(
    app_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dry-run`` prints the merged config and writes nothing; without it the file is written."""
    path = tmp_path / "desktop.json"
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    args = ["install", "claude-desktop", str(app_file), "--config", str(path), "--env", "K=v"]
    assert main([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"# {path}\n")
    assert json.loads(printed.partition("\n")[2])["mcpServers"]["installed"]["env"] == {"K": "v"}
    assert path.read_text(encoding="utf-8") == before
    assert main(args) == 0
    written = json.loads(path.read_text(encoding="utf-8"))
    assert set(written["mcpServers"]) == {"other", "installed"}
    assert written["mcpServers"]["installed"]["args"][-1] == str(app_file.resolve())


def test_install_refuses_a_bad_env_flag_and_a_bad_target(
    app_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed ``--env`` or a target that does not load exits 2 before any write."""
    path = tmp_path / "never.json"
    assert main(["install", "cursor", str(app_file), "--config", str(path), "--env", "K"]) == 2
    assert "bad --env 'K'" in capsys.readouterr().err
    assert main(["install", "cursor", str(tmp_path / "nope.py"), "--config", str(path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert not path.exists()
