"""Shared timing and reporting for the benchmarks: medians of interleaved runs, one JSON line."""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any


def samples_ms(
    fns: Mapping[str, Callable[[], object]], runs: int = 7, warmup: int = 2
) -> dict[str, list[float]]:
    """Milliseconds per call of each function, ``runs`` samples each, interleaved.

    Every round calls each function once, so a busy moment of the machine lands on all
    figures alike instead of skewing one ratio. As in ``timeit``, the collector runs before
    each sample and is paused during it, so one call's garbage is not billed to the next.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    enabled = gc.isenabled()
    for _ in range(runs):
        for name, fn in fns.items():
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                fn()
                samples[name].append((time.perf_counter() - start) * 1e3)
            finally:
                if enabled:
                    gc.enable()
    return samples


def batched_seconds(
    calls: Mapping[str, Callable[[], object]], rounds: int
) -> dict[str, list[float]]:
    """Seconds per call of every function, ``rounds`` samples each.

    The rounds are interleaved (one batch of every function per round), so a busy moment
    of the machine lands on all the figures alike instead of skewing one ratio. A batch
    repeats its call enough times to last about 50 ms and starts after a collection, so
    the collector's debt from one batch is not billed to the next.
    """
    numbers = {}
    for name, fn in calls.items():
        fn()  # warm-up: first-call costs (caches, lazy imports) are not the steady state
        start = time.perf_counter()
        fn()
        numbers[name] = max(1, int(0.05 / max(time.perf_counter() - start, 1e-9)))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            gc.collect()
            start = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / numbers[name])
    return samples


def best_seconds(calls: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The fastest of ``rounds`` interleaved batches of every function, in seconds per call
    (``batched_seconds``): the least disturbed figure on a shared machine."""
    return {name: min(values) for name, values in batched_seconds(calls, rounds).items()}


def medians_ms(
    fns: Mapping[str, Callable[[], object]], runs: int = 7, warmup: int = 2
) -> dict[str, float]:
    """The median milliseconds per call of each function, measured interleaved."""
    return {
        name: round(statistics.median(values), 3)
        for name, values in samples_ms(fns, runs, warmup).items()
    }


def median_ms(fn: Callable[[], object], runs: int = 7, warmup: int = 2) -> float:
    """The median milliseconds per call of ``fn`` over ``runs`` runs after ``warmup`` calls."""
    return medians_ms({"fn": fn}, runs, warmup)["fn"]


def target(value: float, limit: float) -> dict[str, Any]:
    """A figure checked against an upper bound: ``{"value", "max", "pass"}``."""
    return {"value": round(value, 3), "max": limit, "pass": value <= limit}


def _lines(figures: Mapping[str, Any], prefix: str = "") -> list[str]:
    lines = []
    for name, value in figures.items():
        if isinstance(value, Mapping) and set(value) == {"value", "max", "pass"}:
            verdict = "PASS" if value["pass"] else "FAIL"
            lines.append(f"{verdict} {prefix}{name}: {value['value']} (target <= {value['max']})")
        elif isinstance(value, Mapping):
            lines.extend(_lines(value, f"{prefix}{name}."))
        else:
            lines.append(f"{prefix}{name}: {value}")
    return lines


def report(figures: dict[str, Any], json_mode: bool) -> None:
    """Prints one line per figure (targets as PASS/FAIL); in JSON mode, then one JSON line.

    The JSON object is always the last line, so tools can read ``stdout.splitlines()[-1]``.
    """
    for line in _lines(figures):
        print(line)
    if json_mode:
        print(json.dumps(figures, sort_keys=True))


def all_passed(figures: Mapping[str, Any]) -> bool:
    """Whether every target among the (nested) figures passes."""
    for value in figures.values():
        if isinstance(value, Mapping):
            if set(value) == {"value", "max", "pass"}:
                if not value["pass"]:
                    return False
            elif not all_passed(value):
                return False
    return True


def main_in_rounds(
    measure: Callable[[int], dict[str, Any]],
    description: str,
    argv: list[str] | None = None,
    rounds: int = 7,
) -> int:
    """A benchmark's command line: ``--json`` and ``--rounds`` (default ``rounds``), the
    figures ``measure(rounds)`` returns printed with ``report``; 1 if a target fails."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    parser.add_argument("--rounds", type=int, default=rounds, help="timed rounds per figure")
    args = parser.parse_args(argv)
    figures = measure(args.rounds)
    report(figures, args.json)
    return 0 if all_passed(figures) else 1
