"""``mcpfusion openapi SPEC``: serve, inspect or write the app of an OpenAPI document."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from mcpfusion._app.app import Fusion
from mcpfusion._dev.target import UsageError
from mcpfusion._dev.terminal import Style, TokenCounter, definition_json, render_tools
from mcpfusion._openapi.auth import ApiKey, Bearer, Credentials
from mcpfusion._openapi.build import PLACEHOLDER_URL, from_openapi, server_url
from mcpfusion._openapi.document import load_document
from mcpfusion._openapi.operations import operations

_MODULE = '''"""The MCP app of {title}, from {spec} (written by `mcpfusion openapi --out`)."""

import os
from pathlib import Path

from mcpfusion.openapi import {imports}

app = from_openapi(
    {source},
    base_url=os.environ.get("{base_env}", {base_url!r}),
    auth={auth},
    name={name!r},
    timeout={timeout!r},
    retries={retries!r},
)

if __name__ == "__main__":
    app.run()
'''


def add_openapi_command(commands: Any) -> None:
    """Adds ``openapi`` to the ``mcpfusion`` subcommands."""
    command = commands.add_parser(
        "openapi",
        help="serve an OpenAPI document's operations as tools (stdio), inspect or write them",
    )
    command.add_argument("spec", metavar="SPEC", help="the document: .json, .yaml or .yml")
    command.add_argument("--base-url", help="where the API lives (default: the document's)")
    command.add_argument("--name", help="the server's name (default: the document's title)")
    command.add_argument(
        "--bearer-env", metavar="VAR", help="send a bearer token read from this variable"
    )
    command.add_argument("--api-key-env", metavar="VAR", help="send an API key read from VAR")
    command.add_argument(
        "--api-key-header", default="X-API-Key", help="the API key's header (X-API-Key)"
    )
    command.add_argument("--timeout", type=float, default=30.0, help="seconds per attempt")
    command.add_argument(
        "--retries", type=int, default=2, help="retries of idempotent requests (2)"
    )
    what = command.add_mutually_exclusive_group()
    what.add_argument(
        "--inspect",
        action="store_true",
        help="show the tools with token counts, grouped and as one tool per operation",
    )
    what.add_argument(
        "--out", metavar="FILE", help="write a Python module serving it (mcpfusion run FILE:app)"
    )
    command.set_defaults(handler=_openapi)


def _credentials(args: argparse.Namespace) -> Credentials | None:
    # Secrets come from the environment, never the command line (shell history, ps).
    if args.bearer_env and args.api_key_env:
        raise UsageError("pass --bearer-env or --api-key-env, not both")
    for variable in (args.bearer_env, args.api_key_env):
        if variable and not os.environ.get(variable):
            raise UsageError(f"the environment variable {variable} is not set")
    if args.bearer_env:
        return Bearer(os.environ[args.bearer_env])
    if args.api_key_env:
        return ApiKey(os.environ[args.api_key_env], name=args.api_key_header)
    return None


def _openapi(args: argparse.Namespace) -> int:
    if args.out:
        return _write(args)
    base_url = args.base_url or (PLACEHOLDER_URL if args.inspect else None)
    options: dict[str, Any] = {
        "base_url": base_url,
        "name": args.name,
        "timeout": args.timeout,
        "retries": args.retries,
    }
    if args.inspect:
        return _inspect(args.spec, options)
    app = from_openapi(args.spec, auth=_credentials(args), **options)
    app.run()
    return 0


def _inspect(spec: str, options: dict[str, Any]) -> int:
    """Prints the grouped tools, then what grouping saves over a tool per operation."""
    grouped = from_openapi(spec, **options)
    flat = from_openapi(spec, exposition="flat", **options)
    counter = TokenCounter()
    style = Style.for_stream(sys.stdout, os.environ)
    tools = grouped.list_tools()
    print(
        render_tools(
            tools,
            server=f"{grouped.name} {grouped.version}",
            instructions=None,
            counter=counter,
            style=style,
        )
    )
    print(summary(grouped, flat, counter))
    return 0


def summary(grouped: Fusion, flat: Fusion, counter: TokenCounter) -> str:
    """One line: the operation count and the ``tools/list`` cost grouped vs one per operation."""
    cost = {
        kind: sum(counter.count(definition_json(t)) for t in app.list_tools())
        for kind, app in (("grouped", grouped), ("flat", flat))
    }
    count = len(flat.list_tools())
    return (
        f"{count} operations as {len(grouped.list_tools())} grouped tools: "
        f"{cost['grouped']} tokens; as {count} tools (one per operation): {cost['flat']} tokens"
    )


def _write(args: argparse.Namespace) -> int:
    """Writes a module serving the document, after checking that it builds."""
    out = Path(args.out)
    if out.exists():
        raise UsageError(f"{out} exists; remove it or choose another --out")
    document = load_document(args.spec)
    operations(document)  # its mistakes are reported here, not when the module runs
    spec = Path(args.spec).resolve()
    try:
        source = f'Path(__file__).parent / "{spec.relative_to(out.resolve().parent)}"'
    except ValueError:
        source = f"Path({str(spec)!r})"
    if args.bearer_env:
        auth = f'Bearer(os.environ["{args.bearer_env}"])'
    elif args.api_key_env:
        auth = f'ApiKey(os.environ["{args.api_key_env}"], name={args.api_key_header!r})'
    else:
        auth = "None"
    base_url = args.base_url
    if base_url is None:
        base_url = server_url(document)
    title = str((document.get("info") or {}).get("title") or spec.name)
    out.write_text(
        _MODULE.format(
            title=title.replace('"', "'"),
            spec=spec.name,
            source=source,
            base_env="OPENAPI_BASE_URL",
            base_url=base_url,
            auth=auth,
            imports=", ".join(
                [
                    *(["ApiKey"] if args.api_key_env else []),
                    *(["Bearer"] if args.bearer_env else []),
                    "from_openapi",
                ]
            ),
            name=args.name,
            timeout=args.timeout,
            retries=args.retries,
        ),
        encoding="utf-8",
    )
    print(f"wrote {out}: mcpfusion run {out}:app")
    return 0
