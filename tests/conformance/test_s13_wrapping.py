"""SPEC §13: the one wrapping rule for handler return values."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import (
    Fusion,
    Presenter,
    as_response,
    error,
    require_view,
    response,
    success,
    ui,
)
from mcpfusion.testing import CallResult, FusionTester
from tests.conformance.sample_app import PINNED


class Thing(BaseModel):
    """A presented entity."""

    a: int


def returned(value: Any) -> tuple[CallResult, list[Any]]:
    """Calls an action with a Presenter whose handler returns ``value``.

    Returns the result and the data the Presenter's rules callback saw (empty if it never
    ran).
    """
    seen: list[Any] = []
    view = Presenter("Thing", Thing)

    @view.rules
    def record(data: Any) -> str:
        seen.append(data)
        return "presented"

    app = Fusion("app", **PINNED)
    app.tool("t").action("a", returns=view)(lambda: value)
    return FusionTester(app).call_sync("t", "a"), seen


def test_tool_response_passes_untouched() -> None:
    """SPEC §13 rule 1: a ToolResponse is returned as is, even with a Presenter."""
    for built in (success({"a": 1}), error("no"), response(1).rule("r").build()):
        result, seen = returned(built)
        assert result.response is built
        assert seen == []
        assert as_response(built) is built


def test_unbuilt_builder_is_built() -> None:
    """SPEC §13 rule 2: an unbuilt ResponseBuilder is built, without the Presenter."""
    builder = response({"a": 1}).ui(ui.markdown("m")).rule("r")
    result, seen = returned(builder)
    assert seen == []
    assert result.blocks == builder.build().blocks
    assert require_view(result.response).system_rules == ("r",)
    assert as_response(builder).blocks == builder.build().blocks


def test_none_is_ok() -> None:
    """SPEC §13 rule 3: None becomes the text OK, even with a Presenter."""
    result, seen = returned(None)
    assert seen == []
    assert result.blocks == ("OK",)
    assert result.is_error is False
    assert as_response(None).blocks == ("OK",)


def test_presenter_renders_other_values() -> None:
    """SPEC §13 rule 5: with a Presenter, any other value is rendered by it."""
    result, seen = returned({"a": 1, "secret": "x"})
    assert seen == [{"a": 1}]
    assert result.blocks == ('{\n  "a": 1\n}', "<domain_rules>\n- presented\n</domain_rules>")


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
    """SPEC §13 rule 6: without a Presenter, a value becomes success(value)."""
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
