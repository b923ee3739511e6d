"""Response schemas as Presenter whitelists."""

from __future__ import annotations

import json

from mcpfusion._openapi.document import json_schema
from mcpfusion._openapi.presenters import response_presenter

USER = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "password": {"type": "string", "writeOnly": True},
        "json": {"type": "string", "description": "a name BaseModel also has"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {"n": {}}}},
    },
}


def test_write_only_and_undeclared_fields_never_leave() -> None:
    """writeOnly and undeclared fields, nested ones included, are masked out."""
    presenter = response_presenter("user", json_schema(USER, "response"))
    assert presenter is not None
    row = {
        "id": 1,
        "password": "hunter2",
        "json": "j",
        "ssn": "123",
        "address": {"city": "Oslo", "gate_code": "4711"},
        "tags": [{"n": 1, "secret": True}],
    }
    data = json.loads(presenter.present(row).blocks[0])
    assert data == {"id": 1, "json": "j", "address": {"city": "Oslo"}, "tags": [{"n": 1}]}


def test_absent_fields_are_left_out_not_invented() -> None:
    """A field the upstream did not send is not sent as null."""
    presenter = response_presenter("user", json_schema(USER, "response"))
    assert presenter is not None
    assert json.loads(presenter.present({"id": 2}).blocks[0]) == {"id": 2}


def test_lists_of_objects_use_the_item_schema() -> None:
    """An array response is masked row by row."""
    presenter = response_presenter("users", {"type": "array", "items": USER})
    assert presenter is not None
    data = json.loads(presenter.present([{"id": 1, "x": 2}, {"id": 3}]).blocks[0])
    assert data == [{"id": 1}, {"id": 3}]


def test_schemas_without_object_fields_have_no_presenter() -> None:
    """A map, a scalar or no schema at all is sent as the document declares it."""
    assert response_presenter("inventory", {"type": "object", "additionalProperties": {}}) is None
    assert response_presenter("token", {"type": "string"}) is None
    assert response_presenter("none", None) is None
