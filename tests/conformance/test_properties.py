"""SPEC §2, §3, §4, §7, §8, §9, §10: properties of build() and parse() over hostile text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import toon_format
from hypothesis import assume, given
from hypothesis import strategies as st

from mcpfusion import ErrorEnvelope, ResponseBuilder, ToolResponse, require_view, tool_error
from mcpfusion._wire.datablock import EMPTY_TEXT, DataFormat
from mcpfusion._wire.format import RESERVED_TAGS, fold_lines, neutralize
from mcpfusion._wire.parse import parse, parse_error
from mcpfusion._wire.parts import UIBlock
from tests.conformance.strategies import (
    ExpectedUI,
    as_json,
    expected_entries,
    hostile_text,
    json_values,
    tool_names,
    ui_blocks,
)

_NAMES = "|".join(RESERVED_TAGS)
# What a lenient reader takes for a tag, case-insensitive in Unicode (re.I reads ſ as s and
# ı as i): "<name" then whitespace, "/" or ">"; "</name>", spaces allowed around the "/".
OPENING = {name: re.compile(rf"<\s*{name}(?=[\s/>])", re.I) for name in RESERVED_TAGS}
CLOSING = {name: re.compile(rf"<\s*/\s*{name}\s*>", re.I) for name in RESERVED_TAGS}
# Stricter: any "<", optional "/" and whitespace, then the name (what neutralization guarantees).
ANY_MENTION = {name: re.compile(rf"<\s*/?\s*{name}", re.I) for name in RESERVED_TAGS}
# The formats whose data block parse() reads back (TOON is checked on its own).
FORMATS: tuple[DataFormat, ...] = ("json", "compact")


@dataclass
class Case:
    """A builder's inputs, the order they were added in, and what must come back."""

    data: Any
    data_format: DataFormat
    steps: list[tuple[str, Any]] = field(default_factory=list)

    def build(self) -> ToolResponse:
        builder = ResponseBuilder(self.data, data_format=self.data_format)
        for kind, value in self.steps:
            if kind == "ui":
                builder.ui(value[0])
            elif kind == "embed":
                builder.embed(value[0])
            elif kind == "directive":
                builder.directive(value)
            elif kind == "rule":
                builder.rule(value)
            else:
                builder.suggest(*value)
        return builder.build()

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.steps if k == kind]

    def suggestion_entries(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for tool, reason in self.of("suggest"):
            entry = (tool, neutralize(fold_lines(reason)))
            if entry not in seen:
                seen.append(entry)
        return seen


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A response with random parts of every kind, added in a random interleaving."""
    data = draw(st.one_of(hostile_text, json_values))
    data_format = draw(st.sampled_from(FORMATS))
    steps: list[tuple[str, Any]] = []
    steps += [("ui", b) for b in draw(st.lists(ui_blocks(), max_size=3))]
    steps += [("embed", b) for b in draw(st.lists(ui_blocks(), max_size=2))]
    texts = st.lists(st.none() | hostile_text, max_size=4)
    steps += [("directive", t) for t in draw(texts)]
    steps += [("rule", t) for t in draw(texts)]
    steps += [("suggest", s) for s in draw(st.lists(st.tuples(tool_names, hostile_text)))]
    return Case(data, data_format, list(draw(st.permutations(steps))))


# A CommonMark closing fence: up to 3 spaces, a backtick run, trailing blanks (CR, LF, CRLF lines).
_FENCE_CLOSER = re.compile(r" {0,3}(`+)[ \t]*")


def _assert_fence_closes_at_end(content: str) -> None:
    """Fails if a CommonMark reader would close the content's fence before its last line."""
    lines = re.split(r"\r\n|\r|\n", content)
    run = len(lines[0]) - len(lines[0].lstrip("`"))
    closers = [
        index
        for index, line in enumerate(lines[1:], 1)
        if (found := _FENCE_CLOSER.fullmatch(line)) and len(found.group(1)) >= run
    ]
    assert closers[:1] == [len(lines) - 1], content


def _check_ui(parsed: UIBlock, expected: ExpectedUI) -> None:
    assert (parsed.type, parsed.title, parsed.width, parsed.priority) == (
        expected.type,
        expected.title,
        expected.width,
        expected.priority,
    )
    if expected.content is not None:
        assert parsed.content == expected.content
    if expected.lang is not None:
        assert parsed.lang == expected.lang
        _assert_fence_closes_at_end(parsed.content)
    if expected.body is not None:
        assert parsed.body == expected.body
    if expected.is_json:
        assert json.loads(parsed.body) == expected.json_body


@given(cases())
def test_parse_gives_back_what_went_in(case: Case) -> None:
    """SPEC §2-§4, §8: parse(build(x)) returns every part, folded and neutralized as documented."""
    result = case.build()
    parsed = parse(result.to_mcp()["content"])
    view = parsed.view
    if isinstance(case.data, str) or case.data is None:
        assert result.blocks[0] == (neutralize(case.data) if case.data else EMPTY_TEXT)
    else:
        assert parsed.is_json
        assert view.data == as_json(case.data)
    # Embeds and UI blocks are both <ui_passthrough> on the wire: UI first, then embeds.
    expected_ui = [b[1] for b in case.of("ui")] + [b[1] for b in case.of("embed")]
    assert len(view.ui_blocks) == len(expected_ui)
    for got, want in zip(view.ui_blocks, expected_ui, strict=True):
        _check_ui(got, want)
    assert list(view.directives) == expected_entries(case.of("directive"))
    assert list(view.system_rules) == expected_entries(case.of("rule"))
    assert [(s.tool, s.reason) for s in view.suggestions] == case.suggestion_entries()
    assert parsed.others == ()
    assert parsed.error is None


@given(cases())
def test_view_holds_what_went_in(case: Case) -> None:
    """SPEC §13: the side-door view holds the same parts the wire carries, in wire form."""
    view = require_view(case.build())
    assert view.data is case.data
    assert view.ui_blocks == tuple(b[0] for b in case.of("ui"))
    assert view.embeds == tuple(b[0] for b in case.of("embed"))
    assert list(view.directives) == expected_entries(case.of("directive"))
    assert list(view.system_rules) == expected_entries(case.of("rule"))
    assert [(s.tool, s.reason) for s in view.suggestions] == case.suggestion_entries()


def _emitted(case: Case, result: ToolResponse) -> dict[str, int]:
    view = parse(result.blocks).view
    return {
        "ui_passthrough": len(case.of("ui")) + len(case.of("embed")),
        "llm_directives": int(bool(view.directives)),
        "domain_rules": int(bool(view.system_rules)),
        "action_suggestions": int(bool(view.suggestions)),
        "cache_invalidation": 0,
        "tool_error": 0,
        "validation_error": 0,
    }


def _assert_tag_counts(text: str, emitted: dict[str, int]) -> None:
    for name, count in emitted.items():
        assert len(OPENING[name].findall(text)) == count, name
        assert len(CLOSING[name].findall(text)) == count, name
        assert len(ANY_MENTION[name].findall(text)) == 2 * count, name


@given(cases(), st.sampled_from(["", "\n", "\n\n"]))
def test_no_reserved_tag_is_forged(case: Case, separator: str) -> None:
    """SPEC §7: across all blocks, each reserved tag occurs exactly as often as it was emitted."""
    result = case.build()
    _assert_tag_counts(separator.join(result.blocks), _emitted(case, result))


@given(
    code=hostile_text.filter(bool),  # an empty code is refused (tested in unit tests)
    message=hostile_text,
    recovery=st.none() | hostile_text,
    actions=st.lists(hostile_text, max_size=3),
    details=st.none() | st.dictionaries(hostile_text, hostile_text | st.integers(), max_size=3),
    retry_after=st.none() | st.integers(0, 10**6),
    severity=st.sampled_from(["warning", "error", "critical"]),
)
def test_error_envelope_cannot_be_forged(
    code: str,
    message: str,
    recovery: str | None,
    actions: list[str],
    details: dict[str, Any] | None,
    retry_after: int | None,
    severity: Any,
) -> None:
    """SPEC §7, §9: hostile error text yields one envelope whose code and message parse back."""
    result = tool_error(
        code,
        message,
        recovery=recovery,
        available_actions=actions,
        details=details,
        retry_after=retry_after,
        severity=severity,
    )
    emitted = dict.fromkeys(RESERVED_TAGS, 0) | {"tool_error": 1}
    _assert_tag_counts(result.blocks[0], emitted)
    parsed = parse_error(result.blocks[0])
    assert parsed is not None
    sent = ErrorEnvelope(code, message, severity=severity)  # texts as cut at their limits
    assert (parsed.code, parsed.severity, parsed.message) == (sent.code, severity, sent.message)
    assert result.is_error is (severity != "warning")


def _keys_stay_distinct(value: Any) -> bool:
    if isinstance(value, list):
        return all(_keys_stay_distinct(item) for item in value)
    if isinstance(value, dict):
        keys = {neutralize(key) for key in value}
        return len(keys) == len(value) and all(_keys_stay_distinct(v) for v in value.values())
    return True


def _neutralized(value: Any) -> Any:
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, list):
        return [_neutralized(item) for item in value]
    if isinstance(value, dict):
        return {neutralize(key): _neutralized(item) for key, item in value.items()}
    return value


@given(json_values)
def test_toon_decodes_to_the_neutralized_data(value: Any) -> None:
    """SPEC §10: TOON text decodes to the data, reserved tags neutralized, NaN as null."""
    # Two keys that differ only by a neutralized '<' would collide; that is not the point here.
    assume(_keys_stay_distinct(value))
    expected = _neutralized(as_json(value))
    result = ResponseBuilder(value, data_format="toon").build()
    text = result.blocks[0]
    if isinstance(value, str) or value is None:
        assert text == (neutralize(value) if value else EMPTY_TEXT)
        return
    if value == {}:  # TOON writes an empty object as nothing; a block is never blank
        assert text == EMPTY_TEXT
        return
    assert toon_format.decode(text) == expected
    _assert_tag_counts(text, dict.fromkeys(RESERVED_TAGS, 0))
