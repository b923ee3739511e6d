"""Runs every benchmark module in turn, each in its own process: ``python -m benchmarks``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

# The foundation's benchmarks first; every other module of the package follows by name.
FIRST = ("tokens", "wire")
NOT_BENCHMARKS = frozenset({"__init__", "__main__", "timing"})


def benchmark_names() -> list[str]:
    """The benchmark modules of this package, in run order."""
    found = sorted(p.stem for p in Path(__file__).parent.glob("*.py"))
    names = [name for name in found if name not in NOT_BENCHMARKS]
    return [name for name in FIRST if name in names] + [n for n in names if n not in FIRST]


def main(argv: list[str] | None = None) -> int:
    """Runs the named benchmarks (default all); other options, such as --json, go to each."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    args, passthrough = parser.parse_known_args(argv)
    names = args.names or benchmark_names()
    unknown = sorted(set(names) - set(benchmark_names()))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    failed = []
    for name in names:
        print(f"== benchmarks.{name}", flush=True)
        # A fresh process per benchmark: no caches, heap or GC state carried between them.
        code = subprocess.call([sys.executable, "-m", f"benchmarks.{name}", *passthrough])
        if code != 0:
            failed.append(name)
    if failed:
        print(f"benchmarks with a failed target or error: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
