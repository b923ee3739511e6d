"""Every place a hostile string can enter a result, each building the real result around it.

A point takes strings and returns cases: the blocks of one result holding some of the
strings (several where the place naturally takes several, such as rules or JSON values),
with the reserved tag the framework wraps each block in. A case whose readers fail is
re-run one string at a time, so a failure names its string. Only public names are used,
so the same points run against any version of mcpfusion (issue 10's before/after table).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel

from mcpfusion import (
    Fusion,
    Presenter,
    Suggestion,
    ToolResponse,
    UIBlock,
    response,
    success_structured,
    suggest,
    tool_error,
    ui,
    view_of,
)
from mcpfusion.testing import FusionTester
from tests.attack.readers import READERS, Failure, check

BATCH = 8
"""Strings per result where a place takes several values."""
_CHUNK = 16 * BATCH  # strings per call of a point: a build failure is bisected within one


@dataclass(frozen=True)
class Case:
    """The blocks of one result holding ``strings``, and what wraps each block."""

    strings: tuple[str, ...]
    blocks: tuple[str, ...]
    wrappers: tuple[str | None, ...]
    readers: tuple[str, ...] = READERS


Point = Callable[[Sequence[str]], list[Case]]

_BULLETS = (
    ("llm_directives", "directives"),
    ("domain_rules", "system_rules"),
    ("action_suggestions", "suggestions"),
)


def case_of(strings: Sequence[str], result: ToolResponse) -> Case:
    """A built response's case; its side door (not its text) says which blocks were sent."""
    view = view_of(result)
    assert view is not None, "a built response carries its view"
    wrappers: list[str | None] = [None]
    wrappers += ["ui_passthrough"] * (len(view.ui_blocks) + len(view.embeds))
    wrappers += [tag for tag, field in _BULLETS if getattr(view, field)]
    return Case(tuple(strings), result.blocks, tuple(wrappers))


def _envelope(strings: Sequence[str], result: ToolResponse, tag: str = "tool_error") -> Case:
    return Case(tuple(strings), result.blocks, (tag,))


def _batches(strings: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(strings), BATCH):
        yield strings[start : start + BATCH]


def _one_line(text: str) -> str:
    """``text`` fit for a UI type or fence language: one line, no backtick, not empty."""
    return " ".join(text.splitlines()).replace("`", "'") or "x"


def _each(build: Callable[[str], ToolResponse]) -> Point:
    return lambda strings: [case_of([s], build(s)) for s in strings]


def _batched(build: Callable[[Sequence[str]], ToolResponse]) -> Point:
    return lambda strings: [case_of(batch, build(batch)) for batch in _batches(strings)]


def _envelopes(build: Callable[[Sequence[str]], ToolResponse], *, batched: bool) -> Point:
    if batched:
        return lambda strings: [_envelope(b, build(b)) for b in _batches(strings)]
    return lambda strings: [_envelope([s], build([s])) for s in strings]


def _around(data: Any, *, data_format: Any = "json") -> ToolResponse:
    """Data with framework blocks after it, so a swallowed tag shows."""
    return response(data, data_format=data_format).ui(ui.markdown("after")).rule("after").build()


def _with_ui(blocks: Sequence[UIBlock]) -> ToolResponse:
    return response("data").ui(*blocks).rule("after").build()


def _ui_of(make: Callable[[str], UIBlock]) -> Callable[[Sequence[str]], ToolResponse]:
    """A response with one UI block made by ``make`` from each hostile string."""
    return lambda batch: _with_ui([make(s) for s in batch])


UI_CONTENT: dict[str, Callable[[str], UIBlock]] = {
    "echarts": lambda s: ui.echarts({"title": {"text": s}, s: [s]}),
    "mermaid": ui.mermaid,
    "markdown": ui.markdown,
    "code_block": lambda s: ui.code_block("python", s),
    "table": lambda s: ui.table([s, "n"], [[s, 1], [1, s]]),
    "list": lambda s: ui.list([s, "x", s]),
    "json": lambda s: ui.json({"v": s, s: [s]}),
    "summary": ui.summary,
}
UI_TITLED: dict[str, Callable[[str], UIBlock]] = {
    "echarts": lambda s: ui.echarts({"a": 1}, title=s, width="half", priority=1),
    "mermaid": lambda s: ui.mermaid("graph TD; A-->B", title=s),
    "markdown": lambda s: ui.markdown("text", title=s),
    "code_block": lambda s: ui.code_block("python", "print(1)", title=s),
    "table": lambda s: ui.table(["a"], [[1]], title=s),
    "list": lambda s: ui.list(["a"], title=s),
    "json": lambda s: ui.json([1], title=s),
    "summary": lambda s: ui.summary("text", title=s),
}


# -- a child Presenter, for embeds -------------------------------------------------------


class Line(BaseModel):
    """An embedded row."""

    sku: str
    note: str


class Order(BaseModel):
    """The parent entity."""

    id: str


line_view = Presenter("Line", Line)
line_view.collection_ui(lambda rows: [ui.markdown(r["note"], title=r["sku"]) for r in rows])
line_view.collection_rules(lambda rows: [r["note"] for r in rows])
line_view.collection_suggest(lambda rows: [suggest("orders.reorder", r["note"]) for r in rows])
line_view.directives(lambda rows: [r["sku"] for r in rows])
order_view = Presenter("Order", Order, rules=["Parent rule."]).embed("lines", line_view)


def _embedded(strings: Sequence[str]) -> ToolResponse:
    lines = [{"sku": s, "note": s, "hidden": s} for s in strings]
    return order_view.present({"id": "o1", "lines": lines})


# -- an app, for what an agent sends and for output schemas -------------------------------


class Note(BaseModel):
    """An output schema with strings everywhere."""

    text: str
    tags: list[str]
    meta: dict[str, str]


app = Fusion("attack")
probe = app.tool("probe", description="Echoes hostile input.")


@probe.action()
def counts(
    a0: int = 0, a1: int = 0, a2: int = 0, a3: int = 0, a4: int = 0, a5: int = 0, a6: int = 0
) -> str:
    """Takes integers, so a string sent for one is echoed in the validation error."""
    return "ok"


@probe.action(output_schema=Note)
def note(text: str, tags: list[str], meta: dict[str, str]) -> Note:
    """Returns what it is sent as structured output."""
    return Note(text=text, tags=tags, meta=meta)


tester = FusionTester(app)


def _calls(arguments: Callable[[Sequence[str]], dict[str, Any]], strings: Sequence[str]) -> Any:
    batches = list(_batches(strings))

    async def call_all() -> list[Any]:
        return [await tester.call_tool("probe", arguments(batch)) for batch in batches]

    return zip(batches, anyio.run(call_all), strict=True)


def _validation(arguments: Callable[[Sequence[str]], dict[str, Any]]) -> Point:
    def point(strings: Sequence[str]) -> list[Case]:
        return [
            _envelope(batch, result.response, "validation_error")
            for batch, result in _calls(arguments, strings)
        ]

    return point


# -- structured content -------------------------------------------------------------------

_SENTINEL = response("x").rule("Sentinel rule after the structured content.").build().blocks[1]


def _structured_cases(strings: Sequence[str], result: ToolResponse) -> list[Case]:
    """The text block, then what a client may make of structuredContent: its JSON
    (non-ASCII raw) and its strings one per line; a framework block follows each."""
    content = result.structured_content
    assert content is not None, "a structured result carries structured content"
    raw: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            raw.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                raw.append(key)
                walk(item)

    walk(content)
    dumped = json.dumps(content, ensure_ascii=False, indent=2)
    strings = tuple(strings)
    return [
        Case(strings, (*result.blocks, _SENTINEL), (None, "domain_rules")),
        Case(
            strings,
            (dumped, "\n".join(raw), _SENTINEL),
            (None, None, "domain_rules"),
            readers=tuple(r for r in READERS if r != "parser"),
        ),
    ]


def _structured(strings: Sequence[str]) -> list[Case]:
    cases = []
    for batch in _batches(strings):
        value = {f"k{i}": s for i, s in enumerate(batch)} | {s: [s, 1] for s in batch}
        cases += _structured_cases(batch, success_structured(value))
    return cases


def _structured_by_schema(strings: Sequence[str]) -> list[Case]:
    def arguments(batch: Sequence[str]) -> dict[str, Any]:
        return {
            "action": "note",
            "text": batch[0],
            "tags": list(batch),
            "meta": {s: s for s in batch},
        }

    cases = []
    for batch, result in _calls(arguments, strings):
        cases += _structured_cases(batch, result.response)
    return cases


POINTS: dict[str, Point] = {
    "data: str payload": _each(_around),
    "data: JSON string values": _batched(lambda b: _around({f"k{i}": s for i, s in enumerate(b)})),
    "data: JSON keys": _batched(lambda b: _around({s: i for i, s in enumerate(b)})),
    "data: compact JSON": _batched(lambda b: _around({s: [s] for s in b}, data_format="compact")),
    "data: TOON values": _batched(
        lambda b: _around(
            {"rows": [{"id": i, "note": s} for i, s in enumerate(b)], "notes": list(b)},
            data_format="toon",
        )
    ),
    **{f"ui.{name} content": _batched(_ui_of(make)) for name, make in UI_CONTENT.items()},
    **{f"ui.{name} title": _batched(_ui_of(make)) for name, make in UI_TITLED.items()},
    "ui: UIBlock type": _batched(lambda b: _with_ui([UIBlock(_one_line(s), "c") for s in b])),
    "ui.code_block language": _batched(
        lambda b: _with_ui([ui.code_block(_one_line(s), "print(1)") for s in b])
    ),
    "rules": _batched(
        lambda b: response("data").directive("before").rule(*b).suggest("t.a", "after").build()
    ),
    "directives": _batched(
        lambda b: response("data").ui(ui.markdown("before")).directive(*b).rule("after").build()
    ),
    "suggestion reasons": _batched(
        lambda b: (
            response("d").rule("before").suggestion(*[Suggestion("t.a", s) for s in b]).build()
        )
    ),
    "embeds: child Presenter": _batched(_embedded),
    "error: code": _envelopes(lambda b: tool_error(b[0], "message"), batched=False),
    "error: message": _envelopes(lambda b: tool_error("E", b[0]), batched=False),
    "error: recovery": _envelopes(lambda b: tool_error("E", "m", recovery=b[0]), batched=False),
    "error: available_actions": _envelopes(
        lambda b: tool_error("E", "m", available_actions=list(b)), batched=True
    ),
    "error: details keys": _envelopes(
        lambda b: tool_error("E", "m", details={s: i for i, s in enumerate(b)}), batched=True
    ),
    "error: details values": _envelopes(
        lambda b: tool_error("E", "m", details={f"k{i}": s for i, s in enumerate(b)}),
        batched=True,
    ),
    "validation: echoed values": _validation(
        lambda b: {"action": "counts"} | {f"a{i}": s for i, s in enumerate(b[:7])}
    ),
    "validation: unknown argument names": _validation(
        lambda b: {"action": "counts"} | {s: 1 for s in b}
    ),
    "structured content": _structured,
    "structured content: output schema": _structured_by_schema,
}
"""Every injection point of issue 10, by name."""


def failing_strings(point: Point, strings: Sequence[str]) -> dict[str, dict[str, Failure]]:
    """The strings each reader fails on at ``point``, with one failure each (by reader).

    A result that cannot even be built is a failure of the reader ``build``.
    """
    failing: dict[str, dict[str, Failure]] = {}

    def merge(found: dict[str, dict[str, Failure]]) -> None:
        for reader, by_string in found.items():
            failing.setdefault(reader, {}).update(by_string)

    for start in range(0, len(strings), _CHUNK):
        chunk = strings[start : start + _CHUNK]
        try:
            cases = point(chunk)
        except Exception as exc:
            if len(chunk) == 1:
                merge({"build": {chunk[0]: Failure("build", "", repr(exc))}})
            else:
                for string in chunk:
                    merge(failing_strings(point, [string]))
            continue
        for case in cases:
            failures = check(case.blocks, case.wrappers, case.readers)
            if failures and len(case.strings) > 1:
                for string in case.strings:
                    merge(failing_strings(point, [string]))
            for failure in failures if len(case.strings) == 1 else ():
                failing.setdefault(failure.reader, {}).setdefault(case.strings[0], failure)
    return failing
