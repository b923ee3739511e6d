"""Wall-clock bounds that unit tests used to assert, measured where timing belongs.

A unit test keeps the behaviour (counts, exact texts) and this module keeps the bound, so a
busy machine fails no test and a slowdown still fails ``make bench``. Each case repeats the
work of its test:

* ``bad_list``: answering a call whose list argument holds 200,000 bad items with one
  bounded validation error (tests/unit/_tools/test_validation.py). Bound: 1 s. The baseline,
  informational, is pydantic validating the same list alone.
* ``many_actions``: defining 100 actions that share their parameters on one grouped tool,
  then listing it (tests/unit/_tools/test_tool.py). Bound: 1 s.
* ``cancel_sync``: a call whose sync handler blocks, cancelled after 0.1 s, until
  ``call_tool`` has returned (tests/unit/_app/test_app.py). Bound: 0.5 s.

Each figure is the median of the runs, interleaved, after a warm-up.

Run: ``python -m benchmarks.bounds [--json] [--runs N]``; with ``--json`` the last line is
one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import BaseModel, TypeAdapter, ValidationError

from benchmarks.timing import all_passed, medians_ms, report, target
from mcpfusion import Fusion, ToolResponse

BAD_ITEMS = 200_000
LISTED_FIELDS = 20
"""How many fields one validation error lists before it counts the rest (SPEC §9)."""
ACTIONS = 100
CANCEL_AFTER_S = 0.1
MAX_BAD_LIST_S = 1.0
MAX_MANY_ACTIONS_S = 1.0
MAX_CANCEL_SYNC_S = 0.5


def total(numbers: list[int]) -> int:
    """The handler the bad list is sent to; it is never reached."""
    return sum(numbers)


def bad_list_case() -> tuple[Callable[[], ToolResponse], Callable[[], object]]:
    """The timed call with 200,000 bad items, and pydantic validating them alone."""
    app = Fusion("srv")
    app.tool("t", exposition="flat").action("total")(total)
    arguments = {"numbers": ["x"] * BAD_ITEMS}
    numbers = TypeAdapter(list[int])

    def answer() -> ToolResponse:
        return anyio.run(app.call_tool, "t_total", arguments)

    def validate_alone() -> object:
        try:
            return numbers.validate_python(arguments["numbers"])
        except ValidationError as error:
            return error

    result = answer()
    unlisted = f"{BAD_ITEMS - LISTED_FIELDS} more problems are not listed."
    assert result.is_error and unlisted in result.text, result.text
    return answer, validate_alone


class Thing(BaseModel):
    """A model parameter every action shares."""

    id: int
    name: str


def lookup(key: str, limit: int = 10, where: Thing | None = None) -> None:
    """The one signature all the actions share."""


def define_and_list() -> list[dict[str, Any]]:
    """Defines 100 actions with the same parameters on one grouped tool and lists it."""
    app = Fusion("app")
    tool = app.tool("t")
    for index in range(ACTIONS):
        tool.action(f"a{index}")(lookup)
    return app.list_tools()


def cancel_sync() -> None:
    """Calls a sync handler that blocks, cancels after 0.1 s, and returns when call_tool does."""
    release = threading.Event()
    app = Fusion("srv")
    app.tool("t").action("slow")(lambda: release.wait(timeout=1.0))

    async def call() -> None:
        with anyio.move_on_after(CANCEL_AFTER_S):
            await app.call_tool("t", {"action": "slow"})

    try:
        anyio.run(call)
    finally:
        release.set()  # lets the abandoned worker thread finish now


def measure(runs: int) -> dict[str, Any]:
    """Times every case ``runs`` times, interleaved, and checks each bound."""
    answer, validate_alone = bad_list_case()
    [listed] = define_and_list()
    assert len(listed["inputSchema"]["properties"]) == 4, listed  # action + 3 shared
    medians = medians_ms(
        {
            "bad_list": answer,
            "bad_list_baseline": validate_alone,
            "many_actions": define_and_list,
            "cancel_sync": cancel_sync,
        },
        runs=runs,
    )
    seconds = {name: round(value / 1000, 4) for name, value in medians.items()}
    return {
        "runs": runs,
        "bad_list": {"items": BAD_ITEMS, "baseline_s": seconds["bad_list_baseline"]},
        "many_actions": {"actions": ACTIONS},
        "cancel_sync": {"cancel_after_s": CANCEL_AFTER_S},
        "targets": {
            "bad_list_s": target(seconds["bad_list"], MAX_BAD_LIST_S),
            "many_actions_s": target(seconds["many_actions"], MAX_MANY_ACTIONS_S),
            "cancel_sync_s": target(seconds["cancel_sync"], MAX_CANCEL_SYNC_S),
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the timings and PASS/FAIL; returns 1 if a bound is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per figure (>= 5)")
    args = parser.parse_args(argv)
    figures = measure(max(args.runs, 5))
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
