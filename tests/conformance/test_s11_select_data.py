"""SPEC §11 (data side): `_select` trims the data block only, in schema order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, computed_field

from mcpfusion import Suggestion, UIBlock, ui
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._present.response import require_view
from tests.conformance.golden import assert_golden


class Customer(BaseModel):
    """A customer as the agent may see it."""

    id: str
    name: str


class Invoice(BaseModel):
    """An invoice with a nested customer."""

    id: str
    amount_cents: int
    status: str
    customer: Customer


class Line(BaseModel):
    """An invoice line."""

    sku: str
    qty: int


def raw_invoice(number: int) -> dict[str, Any]:
    """A database row with an undeclared field and lines for an embed."""
    return {
        "id": f"inv_{number}",
        "amount_cents": 1000 * number,
        "status": "open",
        "customer": {"id": f"cus_{number}", "name": f"Client {number}", "password_hash": "x"},
        "lines": [{"sku": f"SKU-{number}", "qty": number}],
        "tenant_id": 42,
    }


def recording_view(seen: list[tuple[str, Any]]) -> Presenter:
    """An invoice Presenter whose callbacks record the data they receive."""
    lines = Presenter("InvoiceLine", Line, rules=["qty is a count of units."])
    lines.collection_ui(lambda items: ui.markdown(f"{len(items)} line(s)"))
    view = Presenter("Invoice", Invoice, rules=["amount_cents is in CENTS."]).embed("lines", lines)

    @view.ui
    def card(invoice: dict[str, Any]) -> UIBlock:
        seen.append(("ui", invoice))
        return ui.markdown(f"{invoice['id']}: {invoice['customer']['name']}")

    @view.rules
    def rules(invoice: dict[str, Any]) -> str:
        seen.append(("rules", invoice))
        return f"Status is {invoice['status']}."

    @view.suggest
    def remind(invoice: dict[str, Any]) -> Suggestion:
        seen.append(("suggest", invoice))
        return suggest("billing.remind", f"Remind {invoice['customer']['id']}")

    @view.collection_ui
    def total(invoices: list[dict[str, Any]]) -> UIBlock:
        seen.append(("collection_ui", invoices))
        return ui.summary(f"{sum(i['amount_cents'] for i in invoices)} cents")

    @view.collection_rules
    def list_rules(invoices: list[dict[str, Any]]) -> str:
        seen.append(("collection_rules", invoices))
        statuses = ", ".join(sorted({invoice["status"] for invoice in invoices}))
        return f"{len(invoices)} invoices, statuses: {statuses}."

    return view


def test_select_on_an_object_golden() -> None:
    """SPEC §11: the data block keeps the selected keys in schema order; the rest is whole."""
    seen: list[tuple[str, Any]] = []
    response = recording_view(seen).present(raw_invoice(1), select=["status", "id"])
    assert_golden("presenter_select_object.txt", response)
    assert response.blocks[0] == '{\n  "id": "inv_1",\n  "status": "open"\n}'
    full = {
        "id": "inv_1",
        "amount_cents": 1000,
        "status": "open",
        "customer": {"id": "cus_1", "name": "Client 1"},
        "lines": [{"sku": "SKU-1", "qty": 1}],
    }
    assert seen == [("ui", full), ("rules", full), ("suggest", full)]
    view = require_view(response)
    assert view.data == {"id": "inv_1", "status": "open"}


def test_select_on_a_list_golden() -> None:
    """SPEC §11: for a list, every item keeps the selected keys; callbacks see whole rows."""
    seen: list[tuple[str, Any]] = []
    response = recording_view(seen).present(
        [raw_invoice(1), raw_invoice(2)], select=["amount_cents", "id"]
    )
    assert_golden("presenter_select_list.txt", response)
    assert json.loads(response.blocks[0]) == [
        {"id": "inv_1", "amount_cents": 1000},
        {"id": "inv_2", "amount_cents": 2000},
    ]
    assert [kind for kind, _ in seen] == ["collection_ui", "collection_rules"]
    for _, rows in seen:
        assert [list(row) for row in rows] == [
            ["id", "amount_cents", "status", "customer", "lines"]
        ] * 2


def test_select_keeps_request_order_out_of_the_data() -> None:
    """SPEC §11/§14: the key order is the schema's, not the order of the request."""
    view = Presenter("Invoice", Invoice)
    forward = view.present(raw_invoice(1), select=["id", "customer"])
    backward = view.present(raw_invoice(1), select=["customer", "id"])
    assert forward.blocks == backward.blocks
    assert list(json.loads(forward.blocks[0])) == ["id", "customer"]


@pytest.mark.parametrize("select", [None, [], ()])
def test_no_or_empty_select_means_everything(select: Any) -> None:
    """SPEC §11: an empty list (or no _select) keeps every key."""
    view = Presenter("Invoice", Invoice)
    assert view.present(raw_invoice(1), select=select).blocks == view.present(raw_invoice(1)).blocks


def test_select_an_embedded_key() -> None:
    """SPEC §11: an embed's key is selectable; left out, the child still adds its blocks."""
    view = recording_view([])
    kept = json.loads(view.present(raw_invoice(1), select=["lines"]).blocks[0])
    assert kept == {"lines": [{"sku": "SKU-1", "qty": 1}]}
    response = view.present(raw_invoice(1), select=["id"])
    assert response.blocks[0] == '{\n  "id": "inv_1"\n}'
    assert '<ui_passthrough type="markdown">\n1 line(s)\n</ui_passthrough>' in response.blocks
    assert "- qty is a count of units." in response.blocks[-2]


def test_select_with_no_data() -> None:
    """SPEC §11: None data stays OK whatever is selected."""
    assert Presenter("Invoice", Invoice).present(None, select=["id"]).blocks[0] == "OK"


class Account(BaseModel):
    """A schema with an excluded field and a computed one."""

    id: str
    secret: str = Field(default="", exclude=True)
    cents: int

    @computed_field  # wraps the method in a property; an explicit @property defeats mypy
    def euros(self) -> float:
        """The balance in euros."""
        return self.cents / 100


def test_select_keys_are_the_data_blocks_top_level_keys() -> None:
    """SPEC §11: the enum source holds what the data can hold: sent fields, computed, embeds."""
    lines = Presenter("InvoiceLine", Line)
    assert Presenter("Invoice", Invoice).embed("lines", lines).select_keys == (
        "id",
        "amount_cents",
        "status",
        "customer",
        "lines",
    )
    account = Presenter("Account", Account)
    assert account.select_keys == ("id", "cents", "euros")
    response = account.present({"id": "a", "secret": "s", "cents": 250}, select=["euros"])
    assert response.blocks[0] == '{\n  "euros": 2.5\n}'


def test_declared_embed_key_is_listed_once() -> None:
    """SPEC §11: a key both declared and embedded appears once, in schema position."""

    class WithLines(BaseModel):
        id: str
        lines: list[Any] = []
        total: int = 0

    view = Presenter("Invoice", WithLines).embed("lines", Presenter("InvoiceLine", Line))
    assert view.select_keys == ("id", "lines", "total")
