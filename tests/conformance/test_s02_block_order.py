"""SPEC §2: build() emits data, UI, embeds, directives, rules, suggestions in that order."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from mcpfusion import ResponseBuilder, response, ui
from tests.conformance.golden import assert_golden

Step = Callable[[ResponseBuilder], object]

# One step per kind; each adds two entries so insertion order inside a kind is visible too.
STEPS: dict[str, Step] = {
    "ui": lambda b: b.ui(ui.markdown("first UI"), ui.summary("second UI")),
    "embed": lambda b: b.embed(ui.markdown("first embed"), ui.markdown("second embed")),
    "directive": lambda b: b.directive("Show the chart.", "Do not invent totals."),
    "rule": lambda b: b.rule("amount_cents is in CENTS. Divide by 100.", "Dates are UTC."),
    "suggest": lambda b: b.suggest("billing.remind", "Send a payment reminder").suggest(
        "billing.pay", "Pay now"
    ),
}


def _build(order: tuple[str, ...]) -> tuple[str, ...]:
    builder = response({"id": "INV-1", "amount_cents": 12000})
    for name in order:
        STEPS[name](builder)
    return builder.build().blocks


def test_full_response_golden() -> None:
    """SPEC §2: a response with every kind, added in scrambled order, matches its golden text."""
    builder = response({"id": "INV-1", "amount_cents": 12000})
    for name in ("suggest", "rule", "embed", "directive", "ui"):
        STEPS[name](builder)
    assert_golden("s02_all_kinds.txt", builder.build())


def test_order_is_independent_of_call_order() -> None:
    """SPEC §2: every one of the 120 call orders of the five kinds yields the same blocks."""
    reference = _build(tuple(STEPS))
    for order in itertools.permutations(STEPS):
        assert _build(order) == reference, order


def test_kinds_appear_in_table_order() -> None:
    """SPEC §2: kinds 1-6 appear in table order, UI and embeds in insertion order."""
    blocks = _build(("suggest", "embed", "rule", "ui", "directive"))
    assert len(blocks) == 8
    assert blocks[0].startswith("{")
    assert "first UI" in blocks[1]
    assert "second UI" in blocks[2]
    assert "first embed" in blocks[3]
    assert "second embed" in blocks[4]
    assert blocks[5].startswith("<llm_directives>\n")
    assert blocks[6].startswith("<domain_rules>\n")
    assert blocks[7].startswith("<action_suggestions>\n")


def test_exactly_one_data_block_and_empty_kinds_omitted() -> None:
    """SPEC §2: a response with only data has exactly one block; empty kinds emit nothing."""
    assert response({"a": 1}).build().blocks == ('{\n  "a": 1\n}',)
    blocks = response({"a": 1}).rule("only a rule").build().blocks
    assert blocks == ('{\n  "a": 1\n}', "<domain_rules>\n- only a rule\n</domain_rules>")


def test_several_calls_of_one_kind_share_one_bullet_block() -> None:
    """SPEC §2: directives, rules and suggestions each form at most one block."""
    built = response(1).rule("a").directive("d1").rule("b").directive("d2").build()
    assert built.blocks == (
        "1",
        "<llm_directives>\n- d1\n- d2\n</llm_directives>",
        "<domain_rules>\n- a\n- b\n</domain_rules>",
    )


def test_embeds_follow_ui_even_when_added_first() -> None:
    """SPEC §2: embed blocks (kind 3) come after every UI block (kind 2)."""
    built = response(None).embed(ui.markdown("E")).ui(ui.markdown("U")).build()
    assert [block.split("\n")[1] for block in built.blocks[1:]] == ["U", "E"]
