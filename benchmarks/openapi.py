"""OpenAPI documents as tools: operation counts and what ``tools/list`` costs, grouped by tag
vs one tool per operation (o200k tokens, compact JSON, as ``mcpfusion inspect`` counts).

The documents are the two real ones the tests ship (``tests/data/openapi``): the Swagger
Petstore (19 operations) and the OpenAI API of 2024-02 (51 operations). Targets: grouped
definitions cost at most 0.8x the per-operation ones on the petstore, and no more than them
on the OpenAI document, whose request bodies (the same in either form) dominate. The time
to build each app is printed as a figure, with no target.

Run: ``python -m benchmarks.openapi [--json]``; with ``--json`` the last line is one JSON
object of the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from mcpfusion.openapi import from_openapi
from mcpfusion.terminal import TokenCounter, definition_json

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "openapi"
TARGETS = {"petstore.yaml": 0.8, "openai.yaml": 1.0}
"""The largest allowed ratio of grouped to per-operation definition tokens."""


def measure(path: Path, counter: TokenCounter) -> dict[str, Any]:
    """Builds the document's app both ways and counts its definitions."""
    started = time.perf_counter()
    grouped = from_openapi(path, base_url="http://upstream.invalid")
    built = time.perf_counter() - started
    flat = from_openapi(path, base_url="http://upstream.invalid", exposition="flat")
    grouped_tools, flat_tools = grouped.list_tools(), flat.list_tools()
    grouped_tokens = sum(counter.count(definition_json(t)) for t in grouped_tools)
    flat_tokens = sum(counter.count(definition_json(t)) for t in flat_tools)
    return {
        "document": path.name,
        "operations": len(flat_tools),
        "grouped_tools": len(grouped_tools),
        "grouped_tokens": grouped_tokens,
        "flat_tokens": flat_tokens,
        "ratio": round(grouped_tokens / flat_tokens, 3),
        "build_seconds": round(built, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures; exits 1 when a target does not hold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    args = parser.parse_args(argv)
    counter = TokenCounter()
    figures = [measure(DATA / name, counter) for name in TARGETS]
    failed = False
    for row in figures:
        target = TARGETS[row["document"]]
        held = row["ratio"] <= target
        failed |= not held
        print(
            f"{row['document']}: {row['operations']} operations; "
            f"{row['grouped_tools']} grouped tools {row['grouped_tokens']} tokens vs "
            f"{row['operations']} tools {row['flat_tokens']} tokens = {row['ratio']}x "
            f"(target <= {target}x: {'held' if held else 'MISSED'}); "
            f"built in {row['build_seconds']} s"
        )
    if args.json:
        print(json.dumps({"openapi": figures}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
