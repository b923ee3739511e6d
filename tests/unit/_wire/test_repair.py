"""Unit tests for _wire.repair: lone surrogates and MISSING in the data block (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toon_format
from pydantic import MISSING, BaseModel

from mcpfusion import Fusion, Presenter, response
from mcpfusion._errors import SerializationError
from mcpfusion._wire.datablock import to_json
from mcpfusion._wire.repair import repaired
from mcpfusion.testing import FusionTester


class Named(BaseModel):
    """A row with a name."""

    id: int
    name: str


LONE = "a\ud800b"
"""A string json.loads gives for '"a\\ud800b"': no transport can encode it."""


def decode(text: str, data_format: str) -> Any:
    """The value a data block's text holds."""
    return toon_format.decode(text) if data_format == "toon" else json.loads(text)


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
def test_lone_surrogate_in_presented_data_becomes_replacement_character(data_format: Any) -> None:
    """A lone surrogate in a row is written U+FFFD in every format instead of failing."""
    view = Presenter("Named", Named, data_format=data_format)
    text = view.present([{"id": 1, "name": LONE}]).blocks[0]
    text.encode()  # the block can go over any transport
    assert decode(text, data_format) == [{"id": 1, "name": "a\ufffdb"}]


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
def test_lone_surrogates_in_keys_and_models_are_replaced(data_format: Any) -> None:
    """Surrogates in dict keys and inside models are replaced too; the rest is unchanged."""
    data = {f"k{LONE}": [Named(id=1, name=LONE), 2.5], "plain": "é"}
    text = response(data, data_format=data_format).build().blocks[0]
    assert decode(text, data_format) == {
        "ka\ufffdb": [{"id": 1, "name": "a\ufffdb"}, 2.5],
        "plain": "é",
    }


def test_a_tool_returning_a_lone_surrogate_succeeds() -> None:
    """Through a tool, such data is a result, not INTERNAL_ERROR."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("t")
    tool.action("get", returns=Presenter("Named", Named))(lambda: {"id": 1, "name": LONE})
    result = FusionTester(app).call_sync("t", "get")
    assert not result.is_error
    assert json.loads(result.text) == {"id": 1, "name": "a\ufffdb"}


def test_repaired_leaves_missing_out_and_keeps_other_values() -> None:
    """MISSING dict entries and list items are dropped; NaN is null as in the data block."""
    assert repaired({"a": MISSING, "b": (1, MISSING), "c": float("nan")}) == {
        "b": [1],
        "c": None,
    }


def test_repair_does_not_hide_a_real_serialization_error() -> None:
    """A value that still cannot be serialized raises with the original cause."""
    with pytest.raises(
        SerializationError,
        match=r"^the data cannot be serialized: Unable to serialize unknown type",
    ):
        to_json({"a": MISSING, "b": object()})
