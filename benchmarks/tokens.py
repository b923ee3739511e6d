"""Token counts (o200k) of indented JSON, compact JSON and TOON for uniform 8-field rows.

The texts are the data blocks mcpfusion sends in its three formats (``response(rows,
data_format=...)``, so the TOON text is exactly ``toon_success``'s). Target (SPEC §10,
issue 2): TOON is at most 0.5x the tokens of indented JSON at 1,000 and 10,000 rows.

Run: ``python -m benchmarks.tokens [--json]``; with ``--json`` the last line is one JSON
object of the figures.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from benchmarks.timing import all_passed, report, target
from mcpfusion import response
from mcpfusion.terminal import TokenCounter

SIZES = (1_000, 10_000)
MAX_TOON_VS_INDENTED = 0.5
CITIES = ("Lisbon", "São Paulo", "New York", "Berlin", "Tokyo", "Nairobi", "Toronto")


def make_rows(count: int) -> list[dict[str, Any]]:
    """Uniform rows of 8 fields: ints, strings, an email, a float, a bool and a date."""
    return [
        {
            "id": n,
            "name": f"Customer {n}",
            "email": f"customer{n}@example.com",
            "age": 18 + n % 60,
            "balance": round((n * 7919) % 1_000_000 / 100, 2),
            "active": n % 3 != 0,
            "city": CITIES[n % len(CITIES)],
            "joined": f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}",
        }
        for n in range(count)
    ]


def measure() -> dict[str, Any]:
    """Counts the tokens of each format at each size, with the TOON ratios."""
    counter = TokenCounter()
    figures: dict[str, Any] = {"encoding": "o200k_base", "sizes": {}, "targets": {}}
    for size in SIZES:
        rows = make_rows(size)
        counts = {
            "indented_json": counter.count(response(rows, data_format="json").build().blocks[0]),
            "compact_json": counter.count(response(rows, data_format="compact").build().blocks[0]),
            "toon": counter.count(response(rows, data_format="toon").build().blocks[0]),
        }
        ratio = counts["toon"] / counts["indented_json"]
        figures["sizes"][f"rows_{size}"] = {
            **counts,
            "toon_vs_indented": round(ratio, 3),
            "toon_vs_compact": round(counts["toon"] / counts["compact_json"], 3),
        }
        figures["targets"][f"toon_vs_indented_{size}"] = target(ratio, MAX_TOON_VS_INDENTED)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Prints the token counts and PASS/FAIL; returns 1 if a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    args = parser.parse_args(argv)
    figures = measure()
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
