"""SPEC §5.1, §5.2, §11: rows by key, absent fields, RootModel, omit_none, static suggestions."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from pydantic import MISSING, BaseModel, RootModel

from mcpfusion import Fusion, Presenter, Suggestion, require_view
from mcpfusion.testing import FusionTester
from tests.conformance.sample_app import PINNED


class Customer(BaseModel):
    """A customer; the email may be absent."""

    id: str
    name: str
    email: str | MISSING = MISSING


class Wrapped(RootModel[Customer]):
    """A RootModel over the customer."""


def rows() -> list[sqlite3.Row]:
    """Two database rows with an extra column the schema does not declare."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE c (id TEXT, name TEXT, email TEXT, api_key TEXT)")
    conn.execute("INSERT INTO c VALUES ('C1', 'Ada', 'ada@example.com', 'sk-1')")
    conn.execute("INSERT INTO c VALUES ('C2', 'Bo', 'bo@example.com', 'sk-2')")
    return conn.execute("SELECT * FROM c").fetchall()


def test_rows_read_by_key_are_masked() -> None:
    """SPEC §5.1: sqlite3.Row items are masked like dicts, undeclared columns dropped."""
    text = Presenter("Customer", Customer, data_format="compact").present(rows()).blocks[0]
    assert text == (
        '[{"id":"C1","name":"Ada","email":"ada@example.com"},'
        '{"id":"C2","name":"Bo","email":"bo@example.com"}]'
    )


def test_missing_is_absent_everywhere() -> None:
    """SPEC §5.1: a MISSING field is absent for callbacks, _select and the data block."""
    seen: list[Any] = []
    view = Presenter("Customer", Customer)
    view.collection_rules(lambda items: seen.extend(items))
    data = [{"id": "C1", "name": "Ada"}, Customer(id="C2", name="Bo")]
    response = view.present(data, select=["id", "email"])
    assert seen == [{"id": "C1", "name": "Ada"}, {"id": "C2", "name": "Bo"}]
    assert json.loads(response.blocks[0]) == [{"id": "C1"}, {"id": "C2"}]


def test_a_root_model_masks_and_selects_as_its_model() -> None:
    """SPEC §5.1, §11: a RootModel over a model offers and masks the model's fields."""
    app = Fusion("srv", **PINNED)
    tool = app.tool("customers").enable_select()
    tool.action("get", returns=Presenter("Customer", Wrapped))(lambda: rows()[0])
    enum = app.list_tools()[0]["inputSchema"]["properties"]["_select"]["items"]["enum"]
    assert enum == ["email", "id", "name"]
    result = FusionTester(app).call_sync("customers", "get", _select=["name"])
    assert result.text == '{\n  "name": "Ada"\n}'


class Ticket(BaseModel):
    """Optional fields with and without a None default."""

    id: int
    assignee: str | None = None
    closed_by: str | None


def test_omit_none_is_opt_in_and_keeps_none_values() -> None:
    """SPEC §5.1: only None values of None-default fields are left out, and only when asked."""
    data = {"id": 1, "assignee": None, "closed_by": None}
    plain = Presenter("Ticket", Ticket, data_format="compact").present(data)
    assert plain.blocks[0] == '{"id":1,"assignee":null,"closed_by":null}'
    lean = Presenter("Ticket", Ticket, data_format="compact", omit_none=True)
    lean.rules(lambda ticket: f"assignee={ticket['assignee']}")
    response = lean.present(data)
    assert response.blocks[0] == '{"id":1,"closed_by":null}'
    assert require_view(response).system_rules == ("assignee=None",)


def test_static_suggestions_for_items_and_lists() -> None:
    """SPEC §5.2: static suggestions are sent for a single object and for a list."""
    view = Presenter("Ticket", Ticket, suggestions=[Suggestion("tickets.find", "Search more")])
    for data in ({"id": 1, "closed_by": None}, [{"id": 1, "closed_by": None}]):
        assert require_view(view.present(data)).suggestions == (
            Suggestion("tickets.find", "Search more"),
        )
