"""SPEC §6: embeds — child Presenters own their subtree, blocks and merged rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, PresenterError, Suggestion, UIBlock, ui
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._present.response import require_view, view_of
from tests.conformance.golden import assert_golden

SECRET = "pbkdf2$SECRET-HASH"


class Product(BaseModel):
    """A product as the agent may see it."""

    sku: str
    name: str


class Line(BaseModel):
    """An invoice line as the agent may see it."""

    sku: str
    qty: int


class Customer(BaseModel):
    """A customer as the agent may see it."""

    id: str
    name: str


class Invoice(BaseModel):
    """An invoice; its lines and customer belong to child Presenters."""

    id: str
    amount_cents: int


def raw_invoice(number: int, lines: int = 3) -> dict[str, Any]:
    """A database row with lines, a customer, secrets and undeclared fields."""
    return {
        "id": f"inv_{number}",
        "amount_cents": 1000 * number,
        "tenant_id": 42,
        "customer": {"id": f"cus_{number}", "name": f"Client {number}", "password_hash": SECRET},
        "lines": [
            {
                "sku": f"SKU-{number}-{n}",
                "qty": n,
                "cost_cents": 10,
                "product": {"sku": f"SKU-{number}-{n}", "name": f"Part {n}", "supplier": "ACME"},
            }
            for n in range(1, lines + 1)
        ],
    }


def line_view(calls: list[tuple[str, Any]] | None = None) -> Presenter:
    """A line Presenter with a limit, static rules and callbacks of both kinds."""
    seen = calls if calls is not None else []
    view = Presenter("InvoiceLine", Line, limit=2, rules=["qty is a count of units.", "Shared."])

    @view.ui
    def line_card(line: dict[str, Any]) -> UIBlock:
        seen.append(("ui", line))
        return ui.markdown(f"Line {line['sku']}")

    @view.collection_ui
    def line_table(lines: list[dict[str, Any]]) -> UIBlock:
        seen.append(("collection_ui", lines))
        return ui.table(["SKU", "Qty"], [[line["sku"], line["qty"]] for line in lines])

    @view.collection_rules
    def line_rules(lines: list[dict[str, Any]]) -> str:
        seen.append(("collection_rules", lines))
        return "Lines are sorted by SKU."

    @view.collection_suggest
    def line_suggest(lines: list[dict[str, Any]]) -> Suggestion:
        seen.append(("collection_suggest", lines))
        return suggest("billing.add_line", "Add a line")

    return view


def customer_view(calls: list[tuple[str, Any]] | None = None) -> Presenter:
    """A customer Presenter whose callbacks record what they receive."""
    seen = calls if calls is not None else []
    view = Presenter("Customer", Customer, directives=["Address the customer by name."])

    @view.ui
    def card(customer: dict[str, Any], ctx: Any) -> UIBlock:
        seen.append(("ui", (customer, ctx)))
        return ui.markdown(f"Customer {customer['name']}", title="Customer")

    @view.rules
    def rules(customer: dict[str, Any]) -> list[str]:
        seen.append(("rules", customer))
        return ["Shared.", "Customers are identified by id."]

    @view.suggest
    def open_customer(customer: dict[str, Any]) -> Suggestion:
        seen.append(("suggest", customer))
        return suggest("crm.open", f"Open {customer['id']}")

    return view


def invoice_view(calls: list[tuple[str, Any]] | None = None) -> Presenter:
    """An invoice Presenter embedding lines and a customer."""
    view = Presenter("Invoice", Invoice, rules=["amount_cents is in CENTS.", "Shared."])

    @view.ui
    def card(invoice: dict[str, Any]) -> UIBlock:
        return ui.markdown(f"Invoice {invoice['id']}")

    @view.collection_ui
    def count(invoices: list[dict[str, Any]]) -> UIBlock:
        return ui.summary(f"{len(invoices)} invoices")

    view.embed("lines", line_view(calls)).embed("customer", customer_view(calls))
    return view


def test_embed_in_a_single_parent_golden() -> None:
    """SPEC §6: the child owns its key; its UI blocks become embed blocks after the parent's."""
    response = invoice_view().present(raw_invoice(1))
    assert_golden("presenter_embed_single.txt", response)
    data = json.loads(response.blocks[0])
    assert list(data) == ["id", "amount_cents", "lines", "customer"]
    assert data["lines"] == [{"sku": "SKU-1-1", "qty": 1}, {"sku": "SKU-1-2", "qty": 2}]
    view = require_view(response)
    assert [block.text for block in view.ui_blocks] == [response.blocks[1]]
    assert [block.text for block in view.embeds] == list(response.blocks[2:5])
    assert view.data == data


def test_embed_in_a_collection_parent_golden() -> None:
    """SPEC §6: a list of parents renders every child's data but no child UI blocks."""
    calls: list[tuple[str, Any]] = []
    response = invoice_view(calls).present([raw_invoice(1, lines=1), raw_invoice(2, lines=3)])
    assert_golden("presenter_embed_collection.txt", response)
    view = require_view(response)
    assert view.embeds == ()
    assert [block.type for block in view.ui_blocks] == ["summary"]
    assert [row["lines"] for row in view.data] == [
        [{"sku": "SKU-1-1", "qty": 1}],
        [{"sku": "SKU-2-1", "qty": 1}, {"sku": "SKU-2-2", "qty": 2}],
    ]
    assert view.suggestions == (
        Suggestion("billing.add_line", "Add a line"),
        Suggestion("crm.open", "Open cus_1"),
        Suggestion("crm.open", "Open cus_2"),
    )
    # Child UI blocks are dropped under a collection parent, so their callbacks never run.
    assert [args for kind, args in calls if kind == "ui"] == []


def test_child_rules_are_merged_parent_first_without_duplicates() -> None:
    """SPEC §6: one rules block, one directives block, one suggestions block, parent first."""
    response = invoice_view().present(raw_invoice(1))
    view = require_view(response)
    assert view.system_rules == (
        "amount_cents is in CENTS.",
        "Shared.",
        "qty is a count of units.",
        "Lines are sorted by SKU.",
        "Customers are identified by id.",
    )
    assert view.directives == ("Address the customer by name.",)
    assert response.blocks[-3:] == (
        "<llm_directives>\n- Address the customer by name.\n</llm_directives>",
        "<domain_rules>\n- amount_cents is in CENTS.\n- Shared.\n- qty is a count of units.\n"
        "- Lines are sorted by SKU.\n- Customers are identified by id.\n</domain_rules>",
        "<action_suggestions>\n- billing.add_line: Add a line\n- crm.open: Open cus_1\n"
        "</action_suggestions>",
    )


def test_embeds_nest_two_levels_golden() -> None:
    """SPEC §6: a child may embed a grandchild; each level masks its own subtree."""
    product = Presenter("Product", Product, rules=["Product names are public."])
    product.ui(lambda item: ui.markdown(f"Product {item['name']}"))
    lines = Presenter("InvoiceLine", Line, rules=["qty is a count of units."])
    lines.collection_ui(lambda items: ui.list(f"{item['qty']} x {item['sku']}" for item in items))
    lines.embed("product", product)
    order = Presenter("Invoice", Invoice, rules=["Product names are public."]).embed("lines", lines)
    response = order.present(raw_invoice(1, lines=2))
    assert_golden("presenter_embed_nested.txt", response)
    assert "supplier" not in response.text
    assert "cost_cents" not in response.text
    view = require_view(response)
    assert view.system_rules == ("Product names are public.", "qty is a count of units.")
    assert view.data["lines"][1] == {
        "sku": "SKU-1-2",
        "qty": 2,
        "product": {"sku": "SKU-1-2", "name": "Part 2"},
    }


def test_grandchild_of_a_single_child_keeps_its_ui() -> None:
    """SPEC §6: a single child of a single parent passes its child's UI blocks up."""
    product = Presenter("Product", Product)
    product.ui(lambda item: ui.markdown(f"Product {item['name']}"))
    line = Presenter("InvoiceLine", Line).embed("product", product)
    line.ui(lambda item: ui.markdown(f"Line {item['sku']}"))
    holder = Presenter("Holder", Invoice).embed("line", line)
    raw = {"id": "h", "amount_cents": 1, "line": raw_invoice(1)["lines"][0]}
    view = require_view(holder.present(raw))
    assert [block.content for block in view.embeds] == ["Line SKU-1-1", "Product Part 1"]


@pytest.mark.parametrize("value", ["missing", None])
def test_missing_or_none_key_renders_nothing(value: Any) -> None:
    """SPEC §6: a missing or None key runs no child and adds nothing to any block."""
    calls: list[tuple[str, Any]] = []
    raw = raw_invoice(1)
    del raw["customer"]
    if value is None:
        raw["lines"] = None
    else:
        del raw["lines"]
    response = invoice_view(calls).present(raw)
    assert calls == []
    assert response.blocks == (
        '{\n  "id": "inv_1",\n  "amount_cents": 1000\n}',
        '<ui_passthrough type="markdown">\nInvoice inv_1\n</ui_passthrough>',
        "<domain_rules>\n- amount_cents is in CENTS.\n- Shared.\n</domain_rules>",
    )


def test_child_replaces_a_key_the_parent_declares() -> None:
    """SPEC §6: if the parent schema declares the key, the child's result replaces it in place."""

    class InvoiceWithLines(BaseModel):
        id: str
        lines: list[dict[str, Any]]
        amount_cents: int

    view = Presenter("Invoice", InvoiceWithLines).embed("lines", Presenter("InvoiceLine", Line))
    data = json.loads(view.present(raw_invoice(1, lines=1)).blocks[0])
    assert data == {"id": "inv_1", "lines": [{"sku": "SKU-1-1", "qty": 1}], "amount_cents": 1000}
    assert list(data) == ["id", "lines", "amount_cents"]


def test_child_masking_never_leaks_to_blocks_or_callbacks() -> None:
    """SPEC §5.1/§6: a secret in an embedded subtree reaches no block and no child callback."""
    calls: list[tuple[str, Any]] = []
    view = invoice_view(calls)
    for data in (raw_invoice(1), [raw_invoice(1), raw_invoice(2)]):
        response = view.present(data, ctx={"tenant": 42})
        assert SECRET not in response.text
        assert "password_hash" not in repr(view_of(response))
    assert calls
    assert "password_hash" not in repr(calls)
    assert "cost_cents" not in repr(calls)
    assert ("ui", ({"id": "cus_1", "name": "Client 1"}, {"tenant": 42})) in calls


def test_child_error_names_the_child_presenter() -> None:
    """SPEC §6: the child masks with its own schema, so its errors name the child."""
    raw = raw_invoice(1)
    raw["lines"][0]["qty"] = "many"
    message = r"^Presenter 'InvoiceLine' rejected item 0, field 'qty': "
    with pytest.raises(PresenterError, match=message) as caught:
        invoice_view().present(raw)
    assert str(caught.value) == "Presenter 'InvoiceLine' rejected item 0, field 'qty': int_parsing"


def test_child_limit_skips_validation_of_dropped_lines() -> None:
    """SPEC §5.1/§6: the child's limit applies before its masking."""
    raw = raw_invoice(1, lines=2)
    raw["lines"].append({"sku": None})
    data = json.loads(invoice_view().present(raw).blocks[0])
    assert [line["sku"] for line in data["lines"]] == ["SKU-1-1", "SKU-1-2"]


def test_direct_cycle_is_rejected() -> None:
    """SPEC §6: a Presenter cannot embed itself."""
    view = Presenter("Invoice", Invoice)
    with pytest.raises(DefinitionError, match="makes a cycle"):
        view.embed("self", view)


def test_indirect_cycles_are_rejected() -> None:
    """SPEC §6: a cycle through one or more other Presenters fails at definition time."""
    a, b, c = (Presenter(name, Invoice) for name in "ABC")
    a.embed("b", b)
    with pytest.raises(DefinitionError, match="Presenter 'B': embedding 'A' at 'a' makes a cycle"):
        b.embed("a", a)
    b.embed("c", c)
    with pytest.raises(DefinitionError, match="makes a cycle"):
        c.embed("a", a)
    assert c.select_keys == ("id", "amount_cents")  # the failed embed left nothing behind


def test_shared_child_is_not_a_cycle() -> None:
    """SPEC §6: two embeds of the same child (a diamond) are allowed."""
    shared = Presenter("Customer", Customer)
    left = Presenter("Left", Invoice).embed("customer", shared)
    right = Presenter("Right", Invoice).embed("customer", shared)
    top = Presenter("Top", Invoice).embed("left", left).embed("right", right)
    assert top.select_keys == ("id", "amount_cents", "left", "right")


def test_duplicate_embed_key_is_rejected() -> None:
    """SPEC §6: a key can be owned by one child only."""
    view = Presenter("Invoice", Invoice).embed("customer", Presenter("Customer", Customer))
    with pytest.raises(DefinitionError, match="'customer' is already embedded"):
        view.embed("customer", Presenter("Other", Customer))


@pytest.mark.parametrize(
    ("key", "child", "message"),
    [
        ("", None, r"^Presenter 'Invoice': embed key must be a non-empty str$"),
        ("lines", Line, r"^Presenter 'Invoice': embed 'lines' needs a Presenter$"),
        (3, None, r"^Presenter 'Invoice': embed key must be a non-empty str$"),
    ],
)
def test_bad_embeds_are_rejected(key: Any, child: Any, message: str) -> None:
    """SPEC §6: an embed needs a non-empty key and a Presenter."""
    with pytest.raises(DefinitionError, match=message):
        Presenter("Invoice", Invoice).embed(key, child or Presenter("Line", Line))
