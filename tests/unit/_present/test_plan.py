"""Unit tests for _present.plan: a compiled plan sends what the builder path sends."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import PresenterError, ui
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._present.response import ToolResponse, require_view
from mcpfusion._present.style import MODEL_DEFAULT, Style
from mcpfusion._wire.parts import Suggestion


class Invoice(BaseModel):
    """A small schema."""

    id: str
    amount_cents: int
    note: str = ""


ROW = {"id": "inv_1", "amount_cents": 100, "note": "<domain_rules> & more", "secret": "s"}
STYLES = [MODEL_DEFAULT, Style("json", "|", "all"), Style("compact", ",", "user")]


def full_view(**options: Any) -> Presenter:
    """A Presenter with every kind of fixed part and callback, entries overlapping."""
    view = Presenter(
        "Invoice",
        Invoice,
        rules=["Amounts are in CENTS.", "Amounts are in\nCENTS.", " "],
        directives=["Be brief.", "<llm_directives>"],
        suggestions=[suggest("billing.list", "See all")],
        **options,
    )
    view.ui(lambda inv: [ui.summary(f"Invoice {inv['id']}"), None, ui.image(b"png")])
    view.rules(lambda inv: ["Amounts are in CENTS.", f"Note: {inv['note']}"])
    view.directives(lambda inv: "Be brief.")
    view.suggest(lambda inv: [suggest("billing.list", "See all"), suggest("billing.pay", "Pay")])
    return view


def same(planned: ToolResponse, built: ToolResponse) -> None:
    """Checks two responses carry the same wire form and the same view."""
    assert planned.to_mcp() == built.to_mcp()
    assert planned.annotations == built.annotations
    assert require_view(planned) == require_view(built)


@pytest.mark.parametrize("style", STYLES)
def test_a_plan_sends_the_builder_paths_blocks_and_view(style: Style) -> None:
    """Every part comes out as the builder path writes it, in every style."""
    view = full_view()
    same(view.planned(view.compile(style), ROW, None, None), view.present(ROW, style=style))


def test_a_plan_honours_the_presenters_own_style_and_select() -> None:
    """The Presenter's own choices win over the app's, and ``_select`` keeps its keys."""
    view = full_view(data_format="json", ui_audience="all")
    plan = view.compile(MODEL_DEFAULT)
    same(
        view.planned(plan, ROW, None, ["amount_cents"]),
        view.present(ROW, None, ["amount_cents"], style=MODEL_DEFAULT),
    )


def test_a_plan_without_parts_sends_the_data_block_alone() -> None:
    """A Presenter with nothing fixed and no callback sends one data block."""
    view = Presenter("Invoice", Invoice)
    planned = view.planned(view.compile(MODEL_DEFAULT), ROW, None, None)
    same(planned, view.present(ROW, style=MODEL_DEFAULT))
    assert len(planned.blocks) == 1


@pytest.mark.parametrize(
    "make", [lambda: None, lambda: [ROW, ROW], lambda: iter([ROW])], ids=["none", "list", "iter"]
)
def test_a_plan_hands_lists_and_none_to_present(make: Any) -> None:
    """``None``, a list and an iterator are presented as ``present`` presents them."""
    view = full_view()
    style = Style("json", "|", "all")
    same(view.planned(view.compile(style), make(), None, None), view.present(make(), style=style))


def test_a_plan_hands_redacting_presenters_to_present() -> None:
    """A redacting Presenter's response is censored on the plan's path too."""
    view = full_view(redact=["note"])
    planned = view.planned(view.compile(MODEL_DEFAULT), ROW, None, None)
    same(planned, view.present(ROW, style=MODEL_DEFAULT))
    assert "more" not in planned.text


def test_a_callback_returning_a_wrong_value_fails_as_on_the_builder_path() -> None:
    """A rule callback returning a number is a Presenter failure naming the Presenter."""
    view = Presenter("Invoice", Invoice)
    view.rules(lambda inv: 42)
    with pytest.raises(PresenterError, match="Invoice"):
        view.planned(view.compile(MODEL_DEFAULT), ROW, None, None)


def test_a_callback_registered_after_the_plan_is_run() -> None:
    """Callbacks are read when a call runs, so one added after compiling still sends."""
    view = Presenter("Invoice", Invoice, rules=["Fixed."])
    plan = view.compile(MODEL_DEFAULT)
    view.rules(lambda inv: "Late.")
    assert require_view(view.planned(plan, ROW, None, None)).system_rules == ("Fixed.", "Late.")


def test_entries_a_callback_adds_are_rendered_once_and_sent_alike_each_time() -> None:
    """The rendering of a callback's entries is remembered: the next call with the same
    entries sends the same blocks and view without rendering them again, and another
    row's entries are rendered for it."""
    view = full_view()
    plan = view.compile(MODEL_DEFAULT)
    first = view.planned(plan, ROW, None, None)
    renders = plan.rules.with_added.cache_info().misses  # type: ignore[attr-defined]
    same(view.planned(plan, ROW, None, None), first)
    assert plan.rules.with_added.cache_info().misses == renders  # type: ignore[attr-defined]
    other = dict(ROW, note="another note")
    same(view.planned(plan, other, None, None), view.present(other, style=MODEL_DEFAULT))


class Unhashable(Suggestion):
    """A suggestion a callback returns that cannot be hashed (a subclass's own ``__eq__``)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Suggestion) and other.entry == self.entry

    __hash__ = None  # type: ignore[assignment]


def test_an_unhashable_entry_is_rendered_afresh() -> None:
    """An entry that cannot be remembered is rendered as the builder path renders it."""
    view = Presenter("Invoice", Invoice, suggestions=[suggest("billing.list", "See all")])
    view.suggest(lambda inv: [Unhashable("billing.pay", "Pay")])
    planned = view.planned(view.compile(MODEL_DEFAULT), ROW, None, None)
    same(planned, view.present(ROW, style=MODEL_DEFAULT))
    assert planned.blocks[-1].endswith(
        "- billing.list: See all\n- billing.pay: Pay\n</action_suggestions>"
    )


class Line(BaseModel):
    """A child schema."""

    sku: str
    quantity: int


class Payment(BaseModel):
    """A grandchild schema."""

    ref: str


LINES = [{"sku": f"SKU-{i}", "quantity": i, "payments": {"ref": f"P{i}"}} for i in range(5)]
NESTED = {**ROW, "lines": LINES, "customer": {"sku": "C", "quantity": 0}}


def family(**child_options: Any) -> Presenter:
    """A Presenter embedding a list and an object, both children embedding a grandchild;
    every level has fixed parts and callbacks for objects and lists, entries overlapping."""
    payment = Presenter("Payment", Payment, rules=["Refs are opaque."])
    payment.ui(lambda pay: ui.summary(f"Payment {pay['ref']}"))
    payment.suggest(lambda pay: suggest("billing.refund", "Refund"))
    line = Presenter(
        "Line", Line, rules=["Amounts are in CENTS.", "Quantities are units."], **child_options
    ).embed("payments", payment)
    line.ui(lambda item: [ui.summary(f"Line {item['sku']}"), ui.image(b"png")])
    line.collection_ui(lambda items: ui.table(["SKU"], [[item["sku"]] for item in items]))
    line.rules(lambda item: f"Line {item['sku']} is open.")
    line.collection_rules(lambda items: f"{len(items)} lines.")
    line.collection_suggest(lambda items: suggest("billing.lines", "See the lines"))
    line.directives(lambda data: "Be brief.")
    view = full_view().embed("lines", line).embed("customer", line)
    return view


@pytest.mark.parametrize("style", STYLES)
def test_a_plan_sends_the_builder_paths_blocks_for_embeds(style: Style) -> None:
    """Children's data, UI blocks (as embeds) and entries (after the parent's own, folded
    and de-duplicated) come out as ``present`` writes them, nested, in every style."""
    view = family()
    planned = view.planned(view.compile(style), NESTED, None, None)
    same(planned, view.present(NESTED, style=style))
    assert require_view(planned).embeds
    assert "Refs are opaque." in require_view(planned).system_rules


@pytest.mark.parametrize("key", ["lines", "customer"])
def test_a_plan_sends_a_single_or_a_collection_child_alone(key: str) -> None:
    """A Presenter whose one embed holds an object, or a list, sends what ``present`` sends."""
    view = family()
    row = {**ROW, key: NESTED[key]}
    same(
        view.planned(view.compile(MODEL_DEFAULT), row, None, None),
        view.present(row, style=MODEL_DEFAULT),
    )


def test_a_plan_cuts_an_embedded_list_to_the_childs_agent_limit() -> None:
    """A child's agent limit cuts its list and its truncation notice is sent as an embed."""
    view = family(limit=2)
    planned = view.planned(view.compile(MODEL_DEFAULT), NESTED, None, None)
    same(planned, view.present(NESTED, style=MODEL_DEFAULT))
    assert len(require_view(planned).data["lines"]) == 2
    assert "2 shown, 3 hidden" in require_view(planned).embeds[0].text


def test_a_plan_selects_the_top_level_keys_of_an_embedding_presenter() -> None:
    """``_select`` keeps the chosen keys, an embed's key among them, as ``present`` does."""
    view = family()
    plan = view.compile(Style("json", "|", "all"))
    for select in (["lines"], ["id"], ["id", "customer"]):
        same(
            view.planned(plan, NESTED, None, select),
            view.present(NESTED, None, select, style=plan.style),
        )


def test_a_plan_hands_a_redacting_child_to_present() -> None:
    """A child that redacts makes the parent take ``present``: its values are censored."""
    view = family(redact=["sku"])
    planned = view.planned(view.compile(MODEL_DEFAULT), NESTED, None, None)
    same(planned, view.present(NESTED, style=MODEL_DEFAULT))
    assert "SKU-1" not in planned.text


class Note(BaseModel):
    """A child schema with an optional field."""

    text: str
    author: str | None = None


def test_a_plan_hands_an_omitting_child_to_present() -> None:
    """A child that omits ``None`` values makes the parent take ``present``: they are left out."""
    view = Presenter("Invoice", Invoice).embed("memo", Presenter("Note", Note, omit_none=True))
    row = {**ROW, "memo": {"text": "paid late", "author": None}}
    planned = view.planned(view.compile(MODEL_DEFAULT), row, None, None)
    same(planned, view.present(row, style=MODEL_DEFAULT))
    assert require_view(planned).data["memo"] == {"text": "paid late"}


def test_a_failing_child_callback_names_the_child_on_the_plans_path() -> None:
    """A child callback that fails is a Presenter failure naming the child, as in ``present``."""
    line = Presenter("Line", Line)
    line.collection_rules(lambda items: 42)
    view = Presenter("Invoice", Invoice).embed("lines", line)
    with pytest.raises(PresenterError, match="Line"):
        view.planned(view.compile(MODEL_DEFAULT), {**ROW, "lines": LINES}, None, None)
