"""Unit tests for _present.builder: the ResponseBuilder, success helpers and as_response."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcpfusion import (
    ResponseBuilder,
    Suggestion,
    as_response,
    require_view,
    response,
    success,
    toon_success,
    ui,
    view_of,
)


def test_unknown_data_format_raises() -> None:
    """A data format other than json, compact or toon raises ValueError."""
    with pytest.raises(ValueError, match="data_format"):
        ResponseBuilder({}, data_format="yaml")  # type: ignore[arg-type]


def test_every_adder_returns_the_builder() -> None:
    """Each adder returns the same builder, so calls chain."""
    builder = response(1)
    assert builder.ui() is builder
    assert builder.embed() is builder
    assert builder.directive() is builder
    assert builder.rule() is builder
    assert builder.suggest("t", "r") is builder
    assert builder.suggestion() is builder


def test_none_entries_are_skipped() -> None:
    """None UI blocks, embeds, suggestions and texts are skipped without error."""
    built = response(1).ui(None).embed(None).suggestion(None).rule(None).directive(None).build()
    assert built.blocks == ("1",)


@pytest.mark.parametrize(
    ("add", "message"),
    [
        (lambda b: b.ui("<ui_passthrough>"), r"^ui expects UIBlock values; got str$"),
        (lambda b: b.embed({"type": "markdown"}), r"^embed expects UIBlock values; got dict$"),
        (lambda b: b.suggestion(("t", "r")), r"^suggestion expects Suggestion values; got tuple$"),
        (lambda b: b.rule(5), r"^rule expects str values; got int$"),
        (lambda b: b.directive(["x"]), r"^directive expects str values; got list$"),
    ],
)
def test_wrong_kinds_raise_type_error(add: Any, message: str) -> None:
    """Adding a value of the wrong kind raises TypeError at the call."""
    with pytest.raises(TypeError, match=message):
        add(response(1))


def test_suggest_validates_the_tool() -> None:
    """suggest() checks the tool name when it is called."""
    message = "a suggestion names a tool as 1-128 letters, digits or _.-/; got 'not a tool'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        response(1).suggest("not a tool", "r")


def test_build_twice_gives_equal_blocks_and_separate_views() -> None:
    """build() can be called again; each response gets its own view."""
    builder = response({"a": 1}).rule("r")
    first, second = builder.build(), builder.build()
    assert first.blocks == second.blocks
    assert first is not second
    assert view_of(first) is not view_of(second)


def test_later_additions_do_not_change_a_built_response() -> None:
    """A response and its view are snapshots: adding parts afterwards changes neither."""
    builder = response(1).rule("a")
    built = builder.build()
    builder.rule("b").ui(ui.markdown("m"))
    view = require_view(built)
    assert built.blocks == ("1", "<domain_rules>\n- a\n</domain_rules>")
    assert (view.system_rules, view.ui_blocks) == (("a",), ())


def test_suggestions_fold_and_deduplicate_in_the_view() -> None:
    """The view's suggestions are the wire entries: folded reasons, duplicates dropped."""
    built = response(1).suggest("t", "a\nb").suggestion(Suggestion("t", "a b")).build()
    view = require_view(built)
    assert view.suggestions == (Suggestion("t", "a b"),)


def test_success_and_toon_success() -> None:
    """success writes indented JSON; toon_success writes TOON; both attach a view."""
    rows = [{"a": 1}, {"a": 2}]
    assert success(rows).blocks == ('[\n  {\n    "a": 1\n  },\n  {\n    "a": 2\n  }\n]',)
    assert toon_success(rows).blocks == ("[2|]{a}:\n  1\n  2",)
    assert view_of(toon_success(rows)) is not None


def test_builder_data_format_toon_and_compact() -> None:
    """response(data_format=...) chooses the data block's format."""
    assert response([1], data_format="compact").build().blocks == ("[1]",)
    assert response([1], data_format="toon").build().blocks == ("[1|]: 1",)


def test_as_response_follows_the_wrapping_rule() -> None:
    """as_response: a response passes, a builder is built, None is OK, a value is data."""
    built = success(1)
    assert as_response(built) is built
    result = as_response(response({"a": 1}).directive("d"))
    assert result.blocks[1] == "<llm_directives>\n- d\n</llm_directives>"
    assert view_of(result) is not None
    assert as_response(None).blocks == ("OK",)
    assert as_response({"a": 1}) == success({"a": 1})
