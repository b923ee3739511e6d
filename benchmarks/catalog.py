"""Tokens (o200k) of ``tools/list`` for a generated 100-tool app: full, lean, progressive.

A client sends every listed definition with every prompt. The app has 100 grouped tools
(25 domains of four tools, each with three actions and typed parameters). Counted as
``mcpfusion inspect`` counts them (each definition as compact JSON):

- ``full``: ``Fusion(definitions="full")``; ``lean``: the default;
- ``progressive``: ``Fusion(exposure="progressive")``, what a caller sees first (the
  catalog tool); and after one discovery round, what it then pays: the ``search`` answer
  it read once, plus the list re-read with the three tools it asked for.

Target: the first list of a progressive app is at most 0.05x the lean one (the app
exists to keep a 100-tool list out of every prompt).

Run: ``python -m benchmarks.catalog [--json]``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Literal

import anyio

from benchmarks.timing import all_passed, report, target
from mcpfusion import Fusion
from mcpfusion.terminal import TokenCounter, definition_json
from mcpfusion.testing import FusionTester

MAX_PROGRESSIVE_VS_LEAN = 0.05
DOMAINS = [
    "invoices",
    "payments",
    "refunds",
    "customers",
    "orders",
    "shipments",
    "parcels",
    "trucks",
    "drivers",
    "routes",
    "depots",
    "suppliers",
    "contracts",
    "tickets",
    "agents",
    "teams",
    "projects",
    "tasks",
    "sprints",
    "releases",
    "incidents",
    "alerts",
    "dashboards",
    "reports",
    "audits",
]
KINDS = ("records", "notes", "files", "history")


def define(app: Fusion, domain: str, kind: str) -> None:
    """One grouped tool ``{domain}_{kind}`` with a list, a get and an update action."""
    tool = app.tool(
        f"{domain}_{kind}",
        description=f"The {kind} of {domain}: list them, read one, update one.",
    )

    @tool.action(read_only=True)
    def list_items(
        owner_id: str, status: Literal["open", "closed", "all"] = "all", limit: int = 20
    ) -> list[dict[str, str]]:
        """List the items of an owner, newest first."""
        return [{"id": f"{domain}-1", "owner": owner_id, "status": status}][:limit]

    @tool.action(read_only=True)
    def get_item(item_id: str) -> dict[str, str]:
        """Read one item by id."""
        return {"id": item_id, "kind": kind}

    @tool.action(idempotent=True)
    def update_item(item_id: str, note: str, notify: bool = False) -> str:
        """Replace an item's note; notify its owner if asked."""
        return f"{item_id} updated"


def build(**options: Any) -> Fusion:
    """The 100-tool app with ``options`` (``definitions=``, ``exposure=``)."""
    app = Fusion("catalog", **options)
    for domain in DOMAINS:
        for kind in KINDS:
            define(app, domain, kind)
    return app


def listed_tokens(counter: TokenCounter, tools: list[dict[str, Any]]) -> int:
    """What a tools/list costs the model: each definition as compact JSON."""
    return sum(counter.count(definition_json(tool)) for tool in tools)


async def measure() -> dict[str, Any]:
    """Counts each form of tools/list, and one discovery round of the progressive app."""
    counter = TokenCounter()
    full = build(definitions="full").list_tools()
    lean = build().list_tools()
    app = build(exposure="progressive")
    first = await app.list_tools_for(None)
    tester = FusionTester(app)
    found = await tester.call("tool_catalog", "search", words="refunds records", limit=3)
    names = [d["name"] for d in found.data]
    await tester.call("tool_catalog", "use", names=names)
    after = await app.list_tools_for(None)
    figures: dict[str, Any] = {
        "encoding": "o200k_base",
        "tools": len(full),
        "tools_list": {
            "full": listed_tokens(counter, full),
            "lean": listed_tokens(counter, lean),
            "progressive_first": listed_tokens(counter, first),
            "progressive_after_use_3": listed_tokens(counter, after),
            "search_answer_3": counter.count(found.text),
        },
        "targets": {},
    }
    tokens = figures["tools_list"]
    figures["progressive_vs_lean"] = round(tokens["progressive_first"] / tokens["lean"], 4)
    figures["targets"]["progressive_first_vs_lean"] = target(
        tokens["progressive_first"] / tokens["lean"], MAX_PROGRESSIVE_VS_LEAN
    )
    return figures


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
