"""Tokens (o200k) the model reads from the same six calls to one server built in mcpfusion
and in FastMCP, both over streamable HTTP with the official client.

The server (``benchmarks/clinic``) is written as a new user of each framework writes it:
four operations over two clinics' pets and appointments. mcpfusion's is one grouped tool
whose Presenters add a rule (units and dates) and a suggestion (book a visit for an
unvaccinated pet), with the app's defaults; FastMCP's is four tools returning the same
rows (``tests/integrations/fastmcp_suite/clinic_server.py``, run in ``.venv-fastmcp``,
which is made on first use).

Counted: ``tools/list`` once, as a host hands it to the model (each tool's name,
description and input schema as compact JSON), plus the text blocks of the six results
that the model reads (a block for the user only, ``audience: ["user"]``, is not;
``structuredContent`` is not counted for either, as hosts pass the text).

Target (issue 26): mcpfusion costs at most what FastMCP costs (ratio <= 1.0).

Run: ``python -m benchmarks.six_calls [--json]``.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client

from benchmarks.clinic.data import SIX_CALLS
from benchmarks.timing import all_passed, report, target
from mcpfusion.terminal import TokenCounter, definition_json
from tests.e2e.servers import REPO, http_server, stop
from tests.integrations.fastmcp_venv import fastmcp_python

MAX_FUSION_VS_FASTMCP = 1.0
FUSION_TARGET = "benchmarks/clinic/fusion_app.py:app"
FASTMCP_MODULE = "tests.integrations.fastmcp_suite.clinic_server"


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@asynccontextmanager
async def fastmcp_server() -> AsyncIterator[str]:
    """The FastMCP clinic over streamable HTTP; yields its URL once it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [str(fastmcp_python()), "-m", FASTMCP_MODULE, str(port)],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.fail_after(60):
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the FastMCP server exited with {process.returncode}")
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def read_by_model(result: Any) -> str:
    """The text blocks of a result the model reads (not those for the user's eyes only)."""
    texts = []
    for block in result.content:
        audience = block.annotations.audience if block.annotations is not None else None
        if block.type == "text" and (audience is None or "assistant" in audience):
            texts.append(block.text)
    return "\n\n".join(texts)


async def six_calls(url: str, grouped: str | None) -> dict[str, Any]:
    """Lists the tools and makes the six calls; the tokens of each part.

    ``grouped`` names the tool whose ``action`` argument picks the operation (mcpfusion);
    ``None`` calls a tool per operation (FastMCP).
    """
    counter = TokenCounter()
    async with Client(url) as client:
        listed = await client.list_tools()
        definitions = [
            {"name": t.name, "description": t.description or "", "inputSchema": t.input_schema}
            for t in listed.tools
        ]
        figures: dict[str, Any] = {
            "tools_list": sum(counter.count(definition_json(d)) for d in definitions),
            "calls": [],
        }
        for name, arguments in SIX_CALLS:
            if grouped is None:
                result = await client.call_tool(name, arguments)
            else:
                result = await client.call_tool(grouped, {"action": name, **arguments})
            if result.is_error:
                raise RuntimeError(f"{name} failed: {read_by_model(result)}")
            figures["calls"].append(counter.count(read_by_model(result)))
    figures["total"] = figures["tools_list"] + sum(figures["calls"])
    return figures


async def measure() -> dict[str, Any]:
    """Both servers, the same six calls; the ratio of their totals."""
    with anyio.fail_after(600):
        async with http_server(target=FUSION_TARGET) as url:
            fusion = await six_calls(url, "clinic")
        async with fastmcp_server() as url:
            fastmcp = await six_calls(url, None)
    ratio = fusion["total"] / fastmcp["total"]
    return {
        "encoding": "o200k_base",
        "mcpfusion": fusion,
        "fastmcp": fastmcp,
        "fusion_vs_fastmcp": round(ratio, 3),
        "targets": {"fusion_vs_fastmcp": target(ratio, MAX_FUSION_VS_FASTMCP)},
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the token counts and PASS/FAIL; returns 1 if the target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    args = parser.parse_args(argv)
    figures = anyio.run(measure)
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
