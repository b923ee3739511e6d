"""The ``mcpfusion`` command: run, inspect, call, lock, install, new projects, OpenAPI."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from mcpfusion._app.app import Fusion
from mcpfusion._dev import add_dev_command
from mcpfusion._dev.openapi import add_openapi_command
from mcpfusion._dev.project import add_project_commands
from mcpfusion._dev.run import add_run_command
from mcpfusion._dev.run_options import http_options
from mcpfusion._dev.target import USAGE_ERROR, UsageError, load_app, parse_arguments, run_command
from mcpfusion._dev.worker import add_worker_command
from mcpfusion.terminal import Style, TokenCounter, render_result, render_tools

__all__ = [
    "USAGE_ERROR",
    "UsageError",
    "build_parser",
    "http_options",
    "load_app",
    "main",
    "parse_arguments",
]


def _tool(app: Fusion, name: str) -> Mapping[str, Any]:
    tools = {tool["name"]: tool for tool in app.list_tools()}
    if name not in tools:
        raise UsageError(f"unknown tool '{name}'; tools: {', '.join(tools) or '(none)'}")
    return tools[name]


def _inspect(args: argparse.Namespace) -> int:
    app = load_app(args.target)
    tools = app.list_tools()
    if args.json:
        print(json.dumps({"tools": tools}, ensure_ascii=False, indent=2))
        return 0
    counter = TokenCounter()
    server = f"{app.name} {app.version}".strip()
    style = Style.for_stream(sys.stdout, os.environ)
    print(
        render_tools(
            tools, server=server, instructions=app.instructions, counter=counter, style=style
        )
    )
    return 0


async def _report_progress(done: float, total: float | None, message: str | None) -> None:
    of = f"/{total:g}" if total is not None else ""
    print(f"progress {done:g}{of}{f' {message}' if message else ''}", file=sys.stderr)


def _call(args: argparse.Namespace) -> int:
    app = load_app(args.target)
    arguments = parse_arguments(_tool(app, args.tool), args.arguments)
    response = anyio.run(_call_tool, app, args.tool, arguments)
    if args.json:
        print(json.dumps(response.to_mcp(), ensure_ascii=False, indent=2))
    else:
        style = Style.for_stream(sys.stdout, os.environ)
        print(render_result(response, counter=TokenCounter(), style=style))
    return 1 if response.is_error else 0


async def _call_tool(app: Fusion, name: str, arguments: dict[str, Any]) -> Any:
    # In-process, as the process owner: the app's local identity, inside its lifespan.
    async with app.running():
        return await app.call_tool(
            name, arguments, progress=_report_progress, identity=app.local_identity
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mcpfusion`` command."""
    parser = argparse.ArgumentParser(
        prog="mcpfusion",
        description="Run, inspect, call, lock and install mcpfusion apps; start a new one. "
        "TARGET is package.module:app or path/to/file.py:app; app may be a "
        "function taking no arguments that returns the app.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_run_command(commands)

    inspect = commands.add_parser(
        "inspect", help="show every tool as tools/list does, with token counts"
    )
    inspect.add_argument("target", metavar="TARGET")
    inspect.add_argument("--json", action="store_true", help="print the tools/list result")
    inspect.set_defaults(handler=_inspect)

    call = commands.add_parser("call", help="call a tool in-process and show each block")
    call.add_argument("target", metavar="TARGET")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument(
        "arguments",
        metavar="[ACTION] key=value",
        nargs="*",
        help="the action (grouped tools), then arguments; values are JSON when they parse",
    )
    call.add_argument("--json", action="store_true", help="print the exact MCP result")
    call.set_defaults(handler=_call)

    add_dev_command(commands)
    add_openapi_command(commands)
    add_project_commands(commands)
    add_worker_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``mcpfusion`` command; returns the exit status."""
    return run_command(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
