"""The capability lockfile: what each caller scope set sees, pinned for review and CI."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpfusion._app.app import Fusion

LOCK_FILE = "mcpfusion.lock"
"""The lockfile's default name, next to where ``mcpfusion lock`` runs."""

LOCK_VERSION = 1
"""The lockfile format; a reader refuses another one rather than misread it."""


@dataclass(frozen=True, slots=True)
class LockCheck:
    """How a lockfile on disk compares with what the app lists now.

    Attributes:
        matches: the app lists exactly what the lockfile pins.
        diff: a unified diff from the lockfile to the app (empty when it matches).
    """

    matches: bool
    diff: str


def declared_scope_sets(app: Fusion) -> list[frozenset[str]]:
    """The caller scope sets worth locking: none, each set something requires, and all.

    Enumerating every subset grows as two to the number of scopes; the sets the app
    itself declares are the ones that open something, so they are what a reviewer reads.
    """
    required: list[frozenset[str]] = []
    for tool in app.tools.values():
        required.extend(action.requires for action in tool.actions.values())
    for resource in app.surface.resources.values():
        required.append(frozenset(resource.requires))
    for prompt in app.surface.prompts.values():
        required.append(frozenset(prompt.requires))
    every = frozenset().union(*required) if required else frozenset()
    found = {frozenset(), every, *required}
    return sorted(found, key=lambda scopes: (len(scopes), sorted(scopes)))


def _view(app: Fusion, scopes: frozenset[str]) -> dict[str, Any]:
    """What a caller holding ``scopes`` lists: tools, resources, templates and prompts."""
    return {
        "tools": sorted(app.list_tools(scopes), key=lambda tool: str(tool["name"])),
        "resources": sorted(app.list_resources(scopes), key=lambda item: str(item["uri"])),
        "resourceTemplates": sorted(
            app.list_resource_templates(scopes), key=lambda item: str(item["uriTemplate"])
        ),
        "prompts": sorted(app.list_prompts(scopes), key=lambda item: str(item["name"])),
    }


def _canonical(value: Any) -> str:
    """The one JSON spelling of ``value`` that the digest is taken over."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def build_lock(app: Fusion, scope_sets: Iterable[Collection[str]] | None = None) -> dict[str, Any]:
    """The lockfile of ``app``: one entry per scope set that sees something different.

    Two scope sets that list the same thing share an entry (the smaller set is kept), so
    adding a scope no action needs leaves the lockfile alone.

    Args:
        app: the app to lock.
        scope_sets: the caller scope sets to lock; the app's declared ones by default.
    """
    sets = declared_scope_sets(app) if scope_sets is None else [frozenset(s) for s in scope_sets]
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for scopes in sets:
        view = _view(app, scopes)
        key = _canonical(view)
        if key in seen:
            continue
        seen.add(key)
        entries.append({"scopes": sorted(scopes), **view})
    # The instructions reach the model; the version does not, and pinning it would fail
    # every check after a release bump that changed nothing an agent sees.
    server = {"name": app.name, "instructions": app.instructions}
    body = {"server": server, "callers": entries}
    digest = hashlib.sha256(_canonical(body).encode()).hexdigest()
    return {"lockVersion": LOCK_VERSION, **body, "digest": f"sha256:{digest}"}


def render_lock(lock: dict[str, Any]) -> str:
    """The lockfile's text: indented JSON with sorted keys, ending in a newline."""
    return json.dumps(lock, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def write_lock(app: Fusion, path: Path) -> dict[str, Any]:
    """Writes ``app``'s lockfile to ``path`` and returns it."""
    lock = build_lock(app)
    path.write_text(render_lock(lock), encoding="utf-8")
    return lock


def check_lock(app: Fusion, path: Path) -> LockCheck:
    """Compares the lockfile at ``path`` with what ``app`` lists now.

    Raises:
        ValueError: the file is missing, is not JSON, or has another format version.
    """
    if not path.is_file():
        raise ValueError(f"no lockfile at {path}; write one with 'mcpfusion lock'")
    text = path.read_text(encoding="utf-8")
    try:
        pinned = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if not isinstance(pinned, dict) or pinned.get("lockVersion") != LOCK_VERSION:
        raise ValueError(f"{path} is not an mcpfusion lockfile of version {LOCK_VERSION}")
    current = render_lock(build_lock(app))
    # Compared re-rendered, so a reformatted but equal lockfile still matches.
    before = render_lock(pinned)
    if before == current:
        return LockCheck(True, "")
    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        current.splitlines(keepends=True),
        fromfile=f"{path} (locked)",
        tofile=f"{app.name} (now)",
    )
    return LockCheck(False, "".join(diff))
