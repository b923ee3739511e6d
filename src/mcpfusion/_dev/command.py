"""``mcpfusion dev TARGET``: serve the dev console on 127.0.0.1 and print its URL."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from mcpfusion._dev.target import run_command

HOST = "127.0.0.1"
"""The console listens on loopback only: it runs the app's tools for whoever reaches it."""

DEFAULT_PORT = 8765


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("target", metavar="TARGET")
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port on {HOST}; 0 picks one ({DEFAULT_PORT})",
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often to check the app's files and reload it when one changed; 0 turns "
        "reloading off (1)",
    )
    parser.add_argument("--open", action="store_true", help="open the console in a browser")
    parser.set_defaults(handler=run_dev)
    return parser


def add_dev_command(commands: Any) -> argparse.ArgumentParser:
    """Adds ``dev`` to the ``mcpfusion`` command's subparsers; its handler is ``run_dev``.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.
    """
    parser: argparse.ArgumentParser = commands.add_parser(
        "dev",
        help="a local web console: call actions through forms, see each block the model "
        "reads and the result rendered for people",
    )
    return _configure(parser)


def run_dev(args: argparse.Namespace) -> int:
    """Serves the console for ``args.target`` until interrupted; returns the exit status.

    Raises:
        UsageError: the target cannot be loaded or the port is taken.
    """
    # Imported here, not at the top: Starlette, uvicorn and the token counter would add
    # about 0.2 s to every other `mcpfusion` command (this module registers `dev`).
    from mcpfusion._dev.server import run_console

    return run_console(args.target, host=HOST, port=args.port, poll=args.poll, browse=args.open)


def main_dev(argv: Sequence[str] | None = None) -> int:
    """Runs ``mcpfusion dev`` on its own (``python -m mcpfusion._dev``); returns the exit status."""
    parser = _configure(
        argparse.ArgumentParser(
            prog="mcpfusion dev",
            description="A local web console for an mcpfusion app. TARGET is "
            "package.module:app or path/to/file.py:app (app may be a factory).",
        )
    )
    return run_command(parser.parse_args(argv))
