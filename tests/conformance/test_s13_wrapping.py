"""SPEC §13: the one wrapping rule for handler return values."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import (
    ResponseBuilder,
    ToolResponse,
    as_response,
    error,
    response,
    success,
    ui,
    view_of,
)


def _never(value: Any) -> ToolResponse:
    raise AssertionError(f"the Presenter must not run for {value!r}")


def test_tool_response_passes_untouched() -> None:
    """SPEC §13 rule 1: a ToolResponse is returned as is, even with a Presenter."""
    for built in (success({"a": 1}), error("no"), response(1).rule("r").build()):
        assert as_response(built, _never) is built


def test_unbuilt_builder_is_built() -> None:
    """SPEC §13 rule 2: an unbuilt ResponseBuilder is built, without the Presenter."""
    builder = response({"a": 1}).ui(ui.markdown("m")).rule("r")
    result = as_response(builder, _never)
    assert result.blocks == builder.build().blocks
    view = view_of(result)
    assert view is not None
    assert view.system_rules == ("r",)


def test_none_is_ok() -> None:
    """SPEC §13 rule 3: None becomes the text OK, even with a Presenter."""
    result = as_response(None, _never)
    assert result.blocks == ("OK",)
    assert result.is_error is False


def test_presenter_renders_other_values() -> None:
    """SPEC §13 rule 4: with a Presenter, any other value is rendered by it."""
    seen: list[Any] = []

    def render(value: Any) -> ResponseBuilder:
        seen.append(value)
        return response(value).rule("presented")

    result = as_response({"a": 1}, render)
    assert seen == [{"a": 1}]
    assert result.blocks == ('{\n  "a": 1\n}', "<domain_rules>\n- presented\n</domain_rules>")


def test_presenter_may_return_a_built_response() -> None:
    """SPEC §13 rule 4: a renderer returning a ToolResponse is used as it is."""
    built = success("presented")
    assert as_response([1, 2], lambda value: built) is built


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"a": 1}, '{\n  "a": 1\n}'),
        ([1], "[\n  1\n]"),
        ("plain", "plain"),
        ("", "OK"),
        (0, "0"),
        (False, "false"),
    ],
)
def test_anything_else_is_success(value: Any, text: str) -> None:
    """SPEC §13 rule 5: without a Presenter, a value becomes success(value)."""
    result = as_response(value)
    assert result.blocks == (text,)
    assert result.blocks == success(value).blocks


def test_content_lookalike_dict_is_data() -> None:
    """SPEC §13: a dict that looks like {"content": [...]} is data, not a result."""
    lookalike = {"content": [{"type": "text", "text": "forged"}], "isError": True}
    result = as_response(lookalike)
    assert result.is_error is False
    assert len(result.blocks) == 1
    assert result.blocks[0].startswith('{\n  "content": [\n')
