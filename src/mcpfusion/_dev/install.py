"""Adding an app to a desktop client's MCP configuration without touching its other servers."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpfusion._dev.target import UsageError


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Where and how one client keeps its MCP servers.

    Attributes:
        key: the top-level key holding the servers by name.
        typed: whether each entry names its transport (``"type": "stdio"``).
    """

    key: str
    typed: bool


CLIENTS: dict[str, ClientConfig] = {
    "claude-desktop": ClientConfig("mcpServers", typed=False),
    "cursor": ClientConfig("mcpServers", typed=False),
    "claude-code": ClientConfig("mcpServers", typed=True),
    "vscode": ClientConfig("servers", typed=True),
}
"""The clients ``mcpfusion install`` knows, by the name on its command line."""


def default_config_path(
    client: str,
    *,
    home: Path | None = None,
    platform: str = sys.platform,
    environ: Mapping[str, str] = os.environ,
) -> Path:
    """The configuration file each client documents.

    Claude Desktop and Cursor keep one file per user; Claude Code (``.mcp.json``) and
    VS Code (``.vscode/mcp.json``) keep one per project, here the current directory.
    """
    home = Path.home() if home is None else home
    if client == "claude-desktop":
        if platform == "darwin":
            support = home / "Library" / "Application Support"
            return support / "Claude" / "claude_desktop_config.json"
        if platform == "win32":
            appdata = environ.get("APPDATA") or str(home / "AppData" / "Roaming")
            return Path(appdata) / "Claude" / "claude_desktop_config.json"
        config = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(config) / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "claude-code":
        return Path.cwd() / ".mcp.json"
    if client == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    raise UsageError(f"unknown client '{client}'; clients: {', '.join(CLIENTS)}")


def _split(target: str) -> tuple[str, str]:
    """``target``'s module or file and its ``:attr`` suffix (empty without one)."""
    where, sep, attr = target.rpartition(":")
    if not sep or not all(part.isidentifier() for part in attr.split(".")):
        return target, ""
    return where, f":{attr}"


def _is_file(where: str) -> bool:
    """Whether a target names a file, by the rule ``load_app`` reads it with."""
    return where.endswith(".py") or "/" in where or os.sep in where


def absolute_target(target: str, cwd: Path | None = None) -> str:
    """``target`` with a file path made absolute: a client starts the server elsewhere."""
    cwd = Path.cwd() if cwd is None else cwd
    where, attr = _split(target)
    if _is_file(where):
        where = str((cwd / where).resolve())
    return f"{where}{attr}"


def server_entry(
    client: str,
    target: str,
    *,
    env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """The configuration entry that starts ``target`` over stdio with this interpreter.

    A module target (``package.module:app``) is found through ``PYTHONPATH`` set to the
    directory it is installed from, since clients start servers in a directory of theirs.
    """
    cwd = Path.cwd() if cwd is None else cwd
    resolved = absolute_target(target, cwd)
    variables = dict(env or {})
    if not _is_file(_split(target)[0]) and "PYTHONPATH" not in variables:
        variables["PYTHONPATH"] = str(cwd.resolve())
    entry: dict[str, Any] = {"type": "stdio"} if CLIENTS[client].typed else {}
    entry["command"] = str(Path(python).absolute())
    entry["args"] = ["-m", "mcpfusion.cli", "run", resolved]
    if variables:
        entry["env"] = dict(sorted(variables.items()))
    return entry


def _read(path: Path) -> dict[str, Any]:
    """The configuration at ``path`` (empty when there is none yet).

    Raises:
        UsageError: the file is not a JSON object: it is left alone rather than rewritten.
    """
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it or pass --config") from None
    if not isinstance(found, dict):
        raise UsageError(f"{path} holds a JSON {type(found).__name__}, not an object")
    return found


def merged_config(
    client: str, path: Path, name: str, entry: Mapping[str, Any], *, force: bool = False
) -> dict[str, Any]:
    """The configuration at ``path`` with ``entry`` added as server ``name``.

    Raises:
        UsageError: the file cannot be read as a configuration, or another server already
            has ``name`` (unless ``force``).
    """
    config = _read(path)
    key = CLIENTS[client].key
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise UsageError(f"{path}: '{key}' is a JSON {type(servers).__name__}, not an object")
    if name in servers and servers[name] != entry and not force:
        raise UsageError(
            f"{path} already has a server named '{name}'; pass --name to pick another "
            "or --force to replace it"
        )
    servers[name] = dict(entry)
    return config


def render_config(config: Mapping[str, Any]) -> str:
    """The configuration's text, indented as the clients write it."""
    return json.dumps(config, ensure_ascii=False, indent=2) + "\n"


def write_config(path: Path, config: Mapping[str, Any]) -> None:
    """Writes ``config`` to ``path`` atomically: a crash leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(render_config(config))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
