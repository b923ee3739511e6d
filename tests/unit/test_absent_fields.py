"""Absent stays absent: pydantic's MISSING on every path, and RootModel schemas (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toon_format
from pydantic import MISSING, BaseModel, RootModel

from mcpfusion import Fusion, Presenter, require_view, success_structured
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


class Person(BaseModel):
    """A schema with a field that may be absent."""

    id: int
    email: str | MISSING = MISSING


class Line(BaseModel):
    """An embedded child."""

    sku: str


class PersonModel(BaseModel):
    """A row given as a model instance."""

    id: int
    email: str | MISSING = MISSING


ROWS: list[Any] = [{"id": 1}, {"id": 2, "email": "b@example.com", "secret": "s"}]


MODEL_ROWS = [PersonModel(id=1), PersonModel(id=2, email="b@example.com")]


@pytest.mark.parametrize("rows", [ROWS, MODEL_ROWS])
def test_missing_is_absent_in_the_data_block_for_dicts_and_models(rows: list[Any]) -> None:
    """A MISSING field is left out of the data block, whether rows are dicts or models."""
    text = Presenter("Person", Person).present(rows).blocks[0]
    assert json.loads(text) == [{"id": 1}, {"id": 2, "email": "b@example.com"}]
    assert Presenter("Person", Person).present(rows[0]).blocks[0] == '{\n  "id": 1\n}'


def test_missing_value_in_a_dict_row_is_absent() -> None:
    """A dict row holding the MISSING sentinel itself renders as if the key were absent."""
    text = Presenter("Person", Person).present([{"id": 1, "email": MISSING}]).blocks[0]
    assert json.loads(text) == [{"id": 1}]


def test_callbacks_never_see_missing() -> None:
    """Callbacks receive the row without the absent key, not {'email': MISSING}."""
    seen: list[Any] = []
    view = Presenter("Person", Person)
    view.collection_rules(lambda rows: seen.extend(rows))
    view.rules(lambda row: seen.append(row))
    view.present(ROWS)
    view.present({"id": 3})
    assert seen == [{"id": 1}, {"id": 2, "email": "b@example.com"}, {"id": 3}]


@pytest.mark.parametrize("data_format", ["compact", "toon"])
def test_missing_is_absent_in_compact_and_toon(data_format: Any) -> None:
    """The other data formats leave the absent field out too."""
    text = Presenter("Person", Person, data_format=data_format).present(ROWS).blocks[0]
    decoded = json.loads(text) if data_format == "compact" else toon_format.decode(text)
    assert decoded == [{"id": 1}, {"id": 2, "email": "b@example.com"}]


def test_missing_embed_key_renders_nothing() -> None:
    """An embed key holding MISSING renders nothing (SPEC §6), like a missing key."""

    class Order(BaseModel):
        id: int
        lines: list[PersonModel] | MISSING = MISSING

    parent = Presenter("Order", Order).embed("lines", Presenter("Line", Line, rules=["child"]))
    found = require_view(parent.present(Order(id=1)))
    assert found.data == {"id": 1}
    assert found.system_rules == ()


def test_select_of_an_absent_key_leaves_it_absent() -> None:
    """_select of a key a row lacks does not invent it."""
    text = Presenter("Person", Person).present(ROWS, select=["email"]).blocks[0]
    assert json.loads(text) == [{}, {"email": "b@example.com"}]


def test_plain_data_and_structured_content_leave_missing_out() -> None:
    """Unpresented data and structured content drop MISSING entries instead of failing."""
    assert json.loads(served_text({"a": 1, "b": MISSING, "c": [1, MISSING]})) == {
        "a": 1,
        "c": [1],
    }
    response = success_structured({"a": 1, "b": MISSING})
    assert response.structured_content == {"a": 1}
    assert json.loads(response.blocks[0]) == {"a": 1}


def served_text(value: Any) -> str:
    """The data block an action returning ``value`` sends."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("t")
    tool.action("get")(lambda: value)
    return FusionTester(app).call_sync("t", "get").text


async def test_a_tool_returning_missing_rows_is_not_an_internal_error() -> None:
    """Through a tool, valid rows with absent fields are data, not INTERNAL_ERROR."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("people")

    @tool.action(returns=Presenter("Person", Person, data_format="compact"), read_only=True)
    def list_people() -> list[dict[str, Any]]:
        return ROWS

    result = await FusionTester(app).call("people", "list_people")
    assert not result.is_error
    assert result.text == '[{"id":1},{"id":2,"email":"b@example.com"}]'


async def test_structured_output_leaves_missing_out() -> None:
    """An output-schema action whose model has a MISSING field sends it absent."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("people")

    @tool.action(output_schema=PersonModel, read_only=True)
    def get_person() -> PersonModel:
        return PersonModel(id=1)

    result = await FusionTester(app).call("people", "get_person")
    assert result.response.structured_content == {"id": 1}


class Wrapped(RootModel[Person]):
    """A RootModel over a model: its fields are the model's."""


def test_root_model_schema_is_seen_through() -> None:
    """A RootModel[Model] schema offers the model's fields to _select and masks like it."""
    view = Presenter("Person", Wrapped)
    assert view.select_keys == ("id", "email")
    text = view.present({"id": 1, "email": "a@example.com", "x": 0}, select=["email"]).blocks[0]
    assert json.loads(text) == {"email": "a@example.com"}


async def test_root_model_select_enum_names_the_model_fields() -> None:
    """Through a tool, _select lists and accepts the model's own field names."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("people").enable_select()

    @tool.action(returns=Presenter("Person", Wrapped), read_only=True)
    def get_person() -> dict[str, Any]:
        return {"id": 1, "email": "a@example.com"}

    [listed] = app.list_tools()
    assert listed["inputSchema"]["properties"]["_select"]["items"]["enum"] == ["email", "id"]
    result = await FusionTester(app).call("people", "get_person", _select=["id"])
    assert result.data == {"id": 1}
