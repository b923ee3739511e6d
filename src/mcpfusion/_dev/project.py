"""``mcpfusion new``, ``install`` and ``lock``: the commands around a project, not a server."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpfusion._dev.install import (
    CLIENTS,
    default_config_path,
    merged_config,
    render_config,
    server_entry,
    write_config,
)
from mcpfusion._dev.lock import LOCK_FILE, check_lock, write_lock
from mcpfusion._dev.new import create_project, package_name
from mcpfusion._dev.target import UsageError, load_app


def _new(args: argparse.Namespace) -> int:
    root = create_project(args.name, Path(args.directory))
    package = package_name(args.name)
    print(f"created {root}")
    print(f"  cd {root} && pip install -e '.[dev]'")
    print("  make test   # ruff, mypy, pytest")
    print(f"  make run    # mcpfusion run {package}.app:app")
    return 0


def _environment(pairs: Sequence[str]) -> dict[str, str]:
    """The ``--env KEY=VALUE`` flags as a mapping."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"bad --env '{pair}': expected KEY=VALUE")
        found[key] = value
    return found


def _install(args: argparse.Namespace) -> int:
    app = load_app(args.target)  # a target that does not load is refused before any write
    name = args.name or app.name
    entry = server_entry(args.client, args.target, env=_environment(args.env))
    path = Path(args.config) if args.config else default_config_path(args.client)
    config = merged_config(args.client, path, name, entry, force=args.force)
    if args.dry_run:
        print(f"# {path}")
        print(render_config(config), end="")
        return 0
    write_config(path, config)
    print(f"installed '{name}' in {path}; restart {args.client} to load it")
    return 0


def _lock(args: argparse.Namespace) -> int:
    app = load_app(args.target)
    path = Path(args.file)
    if not args.check:
        lock = write_lock(app, path)
        count = len(lock["callers"])
        print(f"wrote {path}: {count} caller scope set{'s' if count != 1 else ''}")
        return 0
    try:
        result = check_lock(app, path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if result.matches:
        print(f"{path} is up to date")
        return 0
    sys.stdout.write(result.diff)
    print(f"\n{path} is out of date: review the diff, then run 'mcpfusion lock'", file=sys.stderr)
    return 1


def add_project_commands(commands: Any) -> None:
    """The ``new``, ``install`` and ``lock`` subcommands."""
    new = commands.add_parser("new", help="create a runnable project: app, Presenter, tests")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--directory", default=".", help="where to create NAME/ (.)")
    new.set_defaults(handler=_new)

    install = commands.add_parser("install", help="add the app to a desktop client's config")
    install.add_argument("client", choices=list(CLIENTS), metavar="CLIENT")
    install.add_argument("target", metavar="TARGET")
    install.add_argument("--name", help="the server's name in the config (the app's name)")
    install.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable for the server; repeatable",
    )
    install.add_argument("--config", metavar="PATH", help="the config file (the client's own)")
    install.add_argument("--dry-run", action="store_true", help="print the config, write nothing")
    install.add_argument(
        "--force", action="store_true", help="replace another server of the same name"
    )
    install.set_defaults(handler=_install)

    lock = commands.add_parser("lock", help="pin what each caller scope set sees")
    lock.add_argument("target", metavar="TARGET")
    lock.add_argument(
        "--check", action="store_true", help="exit 1 with a diff when the lockfile is stale"
    )
    lock.add_argument("--file", default=LOCK_FILE, metavar="PATH", help=f"({LOCK_FILE})")
    lock.set_defaults(handler=_lock)
