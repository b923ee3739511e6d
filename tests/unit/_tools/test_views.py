"""Unit tests of mcpfusion._tools.views: a Presenter per caller, chosen by scope or selector."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Identity, Presenter, Suggestion
from mcpfusion._present.style import MODEL_DEFAULT
from mcpfusion._tools.views import Views
from mcpfusion.testing import FusionTester


class Pet(BaseModel):
    """What anyone may read."""

    name: str


class Patient(Pet):
    """What the vet reads."""

    notes: str


PUBLIC = Presenter("Pet", Pet)
CLINICAL = Presenter("Pet", Patient)
ROWS = [{"name": "Rex", "notes": "allergic"}, {"name": "Tom", "notes": "none"}]


def clinic(returns: Any, *, select: bool = False) -> Fusion:
    """An app whose ``pets.roster`` renders with ``returns``, beside an open ``pets.ping``."""
    app = Fusion("clinic")
    pets = app.tool("pets")
    if select:
        pets.enable_select()

    @pets.action(returns=returns, read_only=True)
    def roster() -> list[dict[str, str]]:
        """The pets."""
        return ROWS

    @pets.action(read_only=True)
    def ping() -> str:
        """Whether it answers."""
        return "pong"

    return app


def call(app: Fusion, *scopes: str) -> Any:
    """``pets.roster`` called by a caller holding ``scopes``."""
    return FusionTester(app, identity=Identity("u", scopes=scopes)).call_sync("pets", "roster")


def listed_actions(app: Fusion, *scopes: str) -> list[str]:
    """The actions of ``pets`` a caller holding ``scopes`` is listed."""
    tester = FusionTester(app, identity=Identity("u", scopes=scopes))
    [tool] = tester.list_tools()
    enum: list[str] = tool["inputSchema"]["properties"]["action"]["enum"]
    return enum


@pytest.mark.parametrize(
    ("returns", "message"),
    [
        ({}, "it is empty"),
        ({"": PUBLIC}, "a key of returns= is a scope name"),
        ({3: PUBLIC}, "a key of returns= is a scope name"),
        ({"vet": Pet}, "takes a Presenter"),
        (42, "a function of the caller's identity"),
    ],
)
def test_a_bad_mapping_or_value_fails_at_definition(returns: Any, message: str) -> None:
    """An empty mapping, a key that is no scope, a value that is no Presenter: DefinitionError."""
    with pytest.raises(DefinitionError, match=message):
        clinic(returns)


def test_views_and_output_schema_together_fail_at_definition() -> None:
    """returns= per caller with output_schema=: the same DefinitionError as with one Presenter."""
    pets = Fusion("clinic").tool("pets")
    with pytest.raises(DefinitionError, match="not both"):
        pets.action("get", returns={"vet": CLINICAL}, output_schema=Pet)(lambda: None)


def test_the_first_scope_held_in_mapping_order_picks_the_view() -> None:
    """A caller holding both keys gets the first one's view; one holding the second, its own."""
    app = clinic({"vet": CLINICAL, "desk": PUBLIC})
    assert "allergic" in call(app, "desk", "vet").text
    assert "allergic" not in call(app, "desk").text


def test_a_view_writes_in_the_app_style() -> None:
    """The chosen view honours the app's defaults: a collection is a TOON data block."""
    text = call(clinic({"desk": PUBLIC}), "desk").text
    assert text == "[2|]{name}:\n  Rex\n  Tom"


def test_the_star_key_serves_every_other_caller_and_lists_the_action() -> None:
    """``"*"`` is the declared default: a caller with no key gets it and sees the action."""
    app = clinic({"vet": CLINICAL, "*": PUBLIC})
    result = call(app)
    assert not result.is_error and "allergic" not in result.text
    assert listed_actions(app) == ["roster", "ping"]


def test_a_caller_without_a_view_is_forbidden_and_not_listed() -> None:
    """No key held and no ``"*"``: FORBIDDEN naming the scope, the action left out of tools/list."""
    app = clinic({"vet": CLINICAL})
    result = call(app, "other")
    assert result.is_error and result.error is not None and result.error.code == "FORBIDDEN"
    assert result.error.message == (
        "This call needs the scope 'vet', which the caller does not have."
    )
    assert listed_actions(app, "other") == ["ping"]
    assert listed_actions(app, "vet") == ["roster", "ping"]


def test_a_selector_picks_by_the_whole_identity() -> None:
    """A selector reads the identity (its tenant here); ``None`` refuses without naming scopes."""

    def by_tenant(identity: Identity | None) -> Presenter | None:
        tenant = identity.tenant if identity is not None else None
        return {"clinic": CLINICAL, "shop": PUBLIC}.get(tenant or "")

    app = clinic(by_tenant)
    tester = FusionTester(app, identity=Identity("u", tenant="clinic"))
    assert "allergic" in tester.call_sync("pets", "roster").text
    refused = tester.as_caller(Identity("u", tenant="bank")).call_sync("pets", "roster")
    assert refused.error is not None and refused.error.code == "FORBIDDEN"
    assert refused.error.message == "This call has no view of its data for this caller."


def test_a_selector_returning_no_presenter_is_an_internal_error() -> None:
    """A selector giving something else fails the call as a server defect, never the server."""
    result = call(clinic(lambda identity: "clinical"))
    assert result.error is not None and result.error.code == "INTERNAL_ERROR"


def test_views_name_their_keys() -> None:
    """A Views' repr names its scopes and ``*``, the scopes that choose a view."""
    views = Views("t/a", {"vet": CLINICAL, "*": PUBLIC})
    assert repr(views) == "Views(vet, *)"
    assert views.scopes == frozenset({"vet"})


def test_a_caller_holding_every_key_is_listed_its_own_view_only() -> None:
    """Holding both keys, the caller's `_select` names the first key's view, not every field."""
    app = clinic({"desk": PUBLIC, "vet": CLINICAL}, select=True)
    tester = FusionTester(app, identity=Identity("u", scopes={"desk", "vet"}))
    [tool] = tester.list_tools()
    assert tool["inputSchema"]["properties"]["_select"]["items"]["enum"] == ["name"]
    assert app.scope_key(tester.identity) == frozenset({"desk", "vet"})


def test_each_view_of_one_object_is_presented_through_its_own_plan() -> None:
    """Every Presenter of a mapping gets a plan when the catalog freezes, and a caller's
    one object is sent through its view's plan as ``present`` writes it."""
    vet_view = Presenter("Pet", Patient, rules=["Notes are confidential."])
    vet_view.suggest(lambda pet: Suggestion("pets.get", "Read it again"))
    app = Fusion("clinic")
    pets = app.tool("pets")

    @pets.action(returns={"vet": vet_view, "*": PUBLIC}, read_only=True)
    def get() -> dict[str, str]:
        """One pet."""
        return ROWS[0]

    vet = FusionTester(app, identity=Identity("u", scopes={"vet"})).call_sync("pets", "get")
    desk = FusionTester(app, identity=Identity("u")).call_sync("pets", "get")
    assert set(pets.actions["get"].plans) == {vet_view, PUBLIC}
    assert tuple(vet.blocks) == vet_view.present(ROWS[0], style=MODEL_DEFAULT).blocks
    assert tuple(desk.blocks) == PUBLIC.present(ROWS[0], style=MODEL_DEFAULT).blocks
