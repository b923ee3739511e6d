"""Prints, per injection point and reader, how many corpus strings get through (issue 10).

Run from the repository root: ``python -m tests.attack.table``. To measure another
version of mcpfusion, put its ``src`` first: ``PYTHONPATH=../old/src:. python -m
tests.attack.table``; the points use public names only.
"""

from __future__ import annotations

import logging
import sys
import time

from tests.attack.corpus import corpus
from tests.attack.points import POINTS, failing_strings
from tests.attack.readers import READERS

COLUMNS = (*READERS, "build")


def main() -> int:
    """Prints one row per injection point: the failing strings per reader, and the time."""
    logging.disable(logging.CRITICAL)  # an old version logs every INTERNAL_ERROR it sends
    strings = corpus()
    print(f"{len(strings)} strings")
    print(f"{'point':36} " + " ".join(f"{c:>11}" for c in COLUMNS) + "   seconds")
    total = 0
    for name, point in POINTS.items():
        start = time.perf_counter()
        failing = failing_strings(point, strings)
        counts = [len(failing.get(column, {})) for column in COLUMNS]
        total += sum(counts)
        cells = " ".join(f"{count:>11}" for count in counts)
        print(f"{name:36} {cells}   {time.perf_counter() - start:7.2f}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
