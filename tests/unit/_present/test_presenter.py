"""Unit tests for _present.presenter: registration, callback shapes, builder, definitions."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpfusion import DefinitionError, PresenterError, ResponseBuilder, Suggestion, ui
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._present.response import require_view


class Invoice(BaseModel):
    """A small schema."""

    id: str
    amount_cents: int


class Line(BaseModel):
    """A child schema."""

    sku: str


ROW = {"id": "inv_1", "amount_cents": 100, "secret": "s"}


def rules_of(view: Presenter, data: Any = ROW, ctx: Any = None) -> tuple[str, ...]:
    """The rules a presented response carries."""
    found = require_view(view.present(data, ctx))
    return found.system_rules


def test_decorators_return_the_function_unchanged() -> None:
    """Registering a callback leaves the decorated name bound to the original function."""
    view = Presenter("Invoice", Invoice)

    def rule(invoice: dict[str, Any]) -> str:
        return "r"

    for register in (
        view.rules,
        view.collection_rules,
        view.ui,
        view.collection_ui,
        view.suggest,
        view.collection_suggest,
        view.directives,
    ):
        assert register(rule) is rule


class CallableRule:
    """A callable object taking (data, ctx)."""

    def __call__(self, data: dict[str, Any], ctx: Any) -> str:
        return f"callable {ctx}"


class Rules:
    """Holds a bound method callback."""

    prefix = "method"

    def rule(self, data: dict[str, Any]) -> str:
        """A one-argument bound method."""
        return f"{self.prefix} {data['id']}"


def variadic(*args: Any) -> str:
    """A callback taking everything positionally."""
    return f"variadic {len(args)}"


def keyword_extras(data: dict[str, Any], **extras: Any) -> str:
    """A one-argument callback with keyword extras."""
    return f"kwargs {sorted(extras)}"


def three(data: dict[str, Any], ctx: Any, unit: str = "cents") -> str:
    """Two positionals and a defaulted third."""
    return f"three {unit}"


def test_every_callable_shape_is_adapted() -> None:
    """Functions, lambdas, partials, methods, callable objects and builtins are all accepted."""
    view = Presenter("Invoice", Invoice)
    view.rules(lambda data: "lambda")
    view.rules(functools.partial(lambda prefix, data: f"{prefix} partial", "a"))
    view.rules(Rules().rule)
    view.rules(CallableRule())
    view.rules(variadic)
    view.rules(keyword_extras)
    view.rules(three)
    view.collection_rules(len)  # a builtin: one argument
    assert rules_of(view, ctx="ctx") == (
        "lambda",
        "a partial",
        "method inv_1",
        "callable ctx",
        "variadic 2",
        "kwargs []",
        "three cents",
    )


def test_builtin_without_signature_gets_data_only() -> None:
    """A callable whose signature cannot be read is called with the data alone."""
    view = Presenter("Invoice", Invoice)
    view.collection_rules(functools.partial(str))  # partial of a builtin class: no signature
    assert "[]" in rules_of(view, data=[])


@pytest.mark.parametrize(
    "callback",
    [
        lambda: "no arguments",
        lambda data, ctx, extra: "three required",
        "not callable",
        None,
    ],
)
def test_bad_callbacks_fail_at_registration(callback: Any) -> None:
    """A callback that cannot take (data) or (data, ctx) fails when it is registered."""
    with pytest.raises(DefinitionError, match="Presenter callback"):
        Presenter("Invoice", Invoice).ui(callback)


def test_keyword_only_required_parameter_fails_at_registration() -> None:
    """A required keyword-only parameter can never be filled, so it fails early."""

    def needs_keyword(data: dict[str, Any], *, unit: str) -> str:
        return unit

    message = r"^a Presenter callback takes \(data\) or \(data, ctx\): <function .*\.needs_keyword "
    with pytest.raises(DefinitionError, match=message):
        Presenter("Invoice", Invoice).rules(needs_keyword)


def test_callbacks_may_return_generators_and_tuples() -> None:
    """A callback may return any iterable of entries."""
    view = Presenter("Invoice", Invoice)

    def generated(data: dict[str, Any]) -> Iterator[str]:
        yield "first"
        yield "second"

    view.rules(generated)
    view.rules(lambda data: ("third", None))
    view.ui(lambda data: (ui.markdown("a"), ui.markdown("b")))
    response = view.present(ROW)
    found = require_view(response)
    assert found.system_rules == ("first", "second", "third")
    assert [block.content for block in found.ui_blocks] == ["a", "b"]


@pytest.mark.parametrize(
    ("register", "result"),
    [
        ("ui", "a string is not a UI block"),
        ("ui", ["fine", ui.markdown("x")]),
        ("rules", 42),
        ("rules", [ui.markdown("a block is not a rule")]),
        ("suggest", ("billing.remind", "a tuple is not a Suggestion")),
        ("directives", [3]),
    ],
)
def test_wrong_result_types_are_presenter_errors(register: str, result: Any) -> None:
    """A callback returning the wrong kind of value fails the Presenter, caused by TypeError."""
    view = Presenter("Invoice", Invoice)
    getattr(view, register)(lambda data: result)
    failed = r"^Presenter 'Invoice' failed: a callback raised TypeError$"
    with pytest.raises(PresenterError, match=failed) as caught:
        view.present(ROW)
    assert isinstance(caught.value.__cause__, TypeError)
    assert str(caught.value) == "Presenter 'Invoice' failed: a callback raised TypeError"


def test_a_raising_callback_is_a_presenter_error_naming_no_repr() -> None:
    """SPEC §9: a callback that raises is a Presenter failure; only the type is named."""
    view = Presenter("Invoice", Invoice, limit=0)

    @view.rules
    def boom(data: Any) -> str:
        raise KeyError("secret /etc/passwd")

    @view.truncation_notice
    def notice(hidden: int) -> Any:
        raise ValueError("secret")

    # A single row meets the raising rule first; a truncated list, the raising notice.
    for data, raised in ((ROW, "KeyError"), ([ROW], "ValueError")):
        failed = rf"^Presenter 'Invoice' failed: a callback raised {raised}$"
        with pytest.raises(PresenterError, match=failed) as caught:
            view.present(data)
        assert "secret" not in str(caught.value)


def test_suggest_helper_builds_a_suggestion() -> None:
    """suggest(tool, reason) is a Suggestion with the `tool: reason` entry."""
    assert suggest("billing.remind", "Send a reminder") == Suggestion(
        "billing.remind", "Send a reminder"
    )
    assert suggest("billing.remind", "Send a reminder").entry == "billing.remind: Send a reminder"


def test_builder_can_be_extended_before_build() -> None:
    """builder() returns a ResponseBuilder a caller may add parts to; order stays SPEC §2."""
    view = Presenter("Invoice", Invoice, rules=["presenter rule"])
    view.ui(lambda data: ui.markdown("presenter ui"))
    builder = view.builder(ROW, select=["id"])
    assert isinstance(builder, ResponseBuilder)
    response = builder.rule("handler rule").ui(ui.markdown("handler ui")).build()
    assert response.blocks == (
        '{\n  "id": "inv_1"\n}',
        '<ui_passthrough type="markdown">\npresenter ui\n</ui_passthrough>',
        '<ui_passthrough type="markdown">\nhandler ui\n</ui_passthrough>',
        "<domain_rules>\n- presenter rule\n- handler rule\n</domain_rules>",
    )


def test_present_equals_builder_build() -> None:
    """present() is builder().build()."""
    view = Presenter("Invoice", Invoice, rules=["r"])
    assert view.present([ROW]).blocks == view.builder([ROW]).build().blocks


def test_tuples_are_collections() -> None:
    """A tuple of rows is presented as a list, with collection callbacks."""
    view = Presenter("Invoice", Invoice, limit=1)
    view.collection_rules(lambda rows: f"{len(rows)} row(s)")
    view.rules(lambda row: "item rule")
    response = view.present((ROW, ROW))
    assert response.blocks[0].startswith("[\n")
    assert rules_of(view, data=(ROW, ROW)) == ("1 row(s)",)


def test_limit_zero_hides_everything() -> None:
    """A limit of 0 shows no rows and says how many were hidden."""
    response = Presenter("Invoice", Invoice, limit=0).present([ROW, ROW])
    assert response.blocks[0] == "[]"
    assert "0 shown, 2 hidden" in response.blocks[1]


def test_notice_returning_none_adds_no_block() -> None:
    """A custom notice may decline to add a block."""
    view = Presenter("Invoice", Invoice, limit=1, truncation_notice=lambda hidden: None)  # type: ignore[arg-type,return-value]
    assert view.present([ROW, ROW]).blocks[1:] == ()


def test_embed_reads_mappings_and_attributes() -> None:
    """A child reads its key from any mapping or from an attribute of the raw item."""

    class Raw:
        def __init__(self) -> None:
            self.id = "inv_1"
            self.amount_cents = 1
            self.lines = [{"sku": "a", "cost": 1}]

    view = Presenter("Invoice", Invoice).embed("lines", Presenter("Line", Line))
    expected = (
        '{\n  "id": "inv_1",\n  "amount_cents": 1,\n'
        '  "lines": [\n    {\n      "sku": "a"\n    }\n  ]\n}'
    )
    assert view.present(Raw()).blocks[0] == expected
    proxy = MappingProxyType({"id": "inv_1", "amount_cents": 1, "lines": [{"sku": "a"}]})
    assert view.present(proxy).blocks[0] == expected


def test_select_given_as_a_string_is_a_type_error() -> None:
    """A bare str would select its characters, so it is refused."""
    with pytest.raises(TypeError, match="not a str"):
        Presenter("Invoice", Invoice).present(ROW, select="id")


def test_repr_and_attributes() -> None:
    """The Presenter exposes its name, schema, limit and format."""
    view = Presenter("Invoice", Invoice, limit=5, data_format="compact")
    assert repr(view) == "Presenter('Invoice', Invoice)"
    assert (view.name, view.schema, view.limit, view.data_format) == (
        "Invoice",
        Invoice,
        5,
        "compact",
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": ""}, "non-empty name"),
        ({"name": None}, "non-empty name"),
        ({"data_format": "xml"}, "data_format must be one of"),
        ({"rules": "amount_cents is in CENTS."}, "take a list of str"),
        ({"directives": "Be brief."}, "take a list of str"),
        ({"rules": ["ok", 3]}, "static rules are strings"),
        ({"directives": [None]}, "static rules are strings"),
    ],
)
def test_definition_mistakes_raise(options: dict[str, Any], message: str) -> None:
    """Wrong constructor arguments raise DefinitionError with a clear message."""
    arguments: dict[str, Any] = {"name": "Invoice", "schema": Invoice, **options}
    with pytest.raises(DefinitionError, match=message):
        Presenter(arguments.pop("name"), arguments.pop("schema"), **arguments)


def test_extra_allow_schema_error_names_the_presenter() -> None:
    """A schema that keeps extras is refused with the Presenter's name in the message."""

    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        id: str

    with pytest.raises(DefinitionError, match=r"^Presenter 'Loose view': schema Loose"):
        Presenter("Loose view", Loose)


def test_callbacks_see_the_data_of_the_data_block() -> None:
    """The data callbacks receive equals what the data block holds (without _select)."""
    seen: list[Any] = []
    view = Presenter("Invoice", Invoice)
    view.ui(lambda data: seen.append(data))
    found = require_view(view.present(ROW))
    assert seen == [found.data] == [{"id": "inv_1", "amount_cents": 100}]


def test_presenter_is_reusable_across_calls() -> None:
    """One Presenter renders many calls without state leaking between them."""
    view = Presenter("Invoice", Invoice, limit=1)
    view.collection_ui(lambda rows: ui.summary(f"{len(rows)} shown"))
    first = require_view(view.present([ROW, ROW]))
    second = require_view(view.present([ROW]))
    assert [block.type for block in first.ui_blocks] == ["summary", "summary"]
    assert second.ui_blocks == (ui.summary("1 shown"),)


def test_static_rules_given_as_a_generator_are_kept() -> None:
    """Static rules and directives may be any iterable of str; a generator is read once."""
    rules = (r for r in ["rule A"])
    # Presenter is annotated with Sequence[str]; iterators are accepted at run time.
    view = Presenter("G", Invoice, rules=rules, directives=iter(["d"]))  # type: ignore[arg-type]
    assert require_view(view.present(ROW)).system_rules == ("rule A",)


def test_a_generator_of_rows_is_a_collection() -> None:
    """A handler that yields rows, or returns dict.values(), gets collection semantics."""
    view = Presenter("G", Invoice, limit=1)
    for rows in ((row for row in [ROW, ROW]), {"a": ROW, "b": ROW}.values()):
        data = require_view(view.present(rows)).data
        assert isinstance(data, list) and len(data) == 1
