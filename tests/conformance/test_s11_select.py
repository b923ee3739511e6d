"""SPEC §11: `_select` on the wire: its schema, its validation, and what it trims."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, ui
from mcpfusion._app.app import Fusion
from mcpfusion._present.presenter import Presenter
from mcpfusion.testing import FusionTester
from tests.conformance.sample_app import PINNED
from tests.conformance.sample_app import app as sample_app

pytestmark = pytest.mark.anyio

RECOVERY = "<recovery>Fix the fields above and call the tool again.</recovery>"


class User(BaseModel):
    """The presented entity."""

    name: str
    email: str
    role: str


class Stats(BaseModel):
    """A structured result."""

    visits: int
    bounces: int


user_view = Presenter("User", User, rules=["Roles: admin, member."])


@user_view.ui
def _card(user: Any) -> Any:
    return ui.summary(f"{user['name']} <{user['email']}> is {user['role']}")


USER = {"name": "Ada", "email": "ada@example.com", "role": "admin"}

app = Fusion("t", **PINNED)
users = app.tool("users").enable_select()
users.action("get", returns=user_view)(lambda: USER)
users.action("list", returns=user_view)(lambda: [USER, {**USER, "name": "Bob"}])
users.action("stats", output_schema=Stats)(lambda: Stats(visits=3, bounces=1))
users.action("ping")(lambda: {"pong": True})
tester = FusionTester(app)


def test_select_property_exact() -> None:
    """SPEC §11: the property is exactly as specified, its enum the sorted union of keys."""
    assert app.list_tools()[0]["inputSchema"]["properties"]["_select"] == {
        "type": "array",
        "uniqueItems": True,
        "items": {
            "type": "string",
            "enum": ["bounces", "email", "name", "role", "visits"],
        },
        "description": "Return only these top-level fields of the data. Omit for all.",
    }


def test_select_is_optional() -> None:
    """SPEC §11: `_select` never appears in `required`."""
    assert "_select" not in app.list_tools()[0]["inputSchema"]["required"]


def test_select_needs_a_response_schema() -> None:
    """SPEC §11: enable_select() on a tool whose actions have no response schema is an error."""
    bare = Fusion("t", **PINNED)
    bare.tool("t").enable_select().action("a")(lambda: None)
    with pytest.raises(DefinitionError, match="enable_select"):
        bare.list_tools()


async def test_select_trims_the_data_block_only() -> None:
    """SPEC §11: the data keeps the selected keys; UI and rules still see the full object."""
    result = await tester.call("users", "get", _select=["email", "name"])
    assert result.blocks[0] == '{\n  "name": "Ada",\n  "email": "ada@example.com"\n}'
    assert result.data == {"name": "Ada", "email": "ada@example.com"}
    assert "is admin" in result.ui_blocks[0].content
    assert result.system_rules == ("Roles: admin, member.",)


async def test_select_on_a_list_trims_each_item() -> None:
    """SPEC §11: for a list, each item keeps the selected keys, in schema order."""
    result = await tester.call("users", "list", _select=["role", "name"])
    assert result.data == [{"name": "Ada", "role": "admin"}, {"name": "Bob", "role": "admin"}]


async def test_empty_select_means_everything() -> None:
    """SPEC §11: an empty list means every field."""
    result = await tester.call("users", "get", _select=[])
    assert result.data == USER


async def test_select_trims_structured_content_and_its_text() -> None:
    """SPEC §11/§12: structured output is trimmed, and the text is its exact JSON."""
    result = await tester.call("users", "stats", _select=["bounces"])
    assert result.structured_content == {"bounces": 1}
    assert result.blocks == ('{\n  "bounces": 1\n}',)


async def test_action_without_schema_ignores_select() -> None:
    """SPEC §11: an action without a response schema ignores `_select`."""
    result = await tester.call("users", "ping", _select=["name"])
    assert result.data == {"pong": True}


async def test_select_not_a_list() -> None:
    """SPEC §11: `_select` that is not a list is a validation error listing the keys."""
    result = await tester.call("users", "get", _select="name")
    assert result.blocks == (
        '<validation_error action="users/get">\n'
        '<field name="_select">Expected a list of field names. You sent: "name". Send a list '
        "drawn from: bounces, email, name, role, visits; omit _select for all fields.</field>\n"
        f"{RECOVERY}\n</validation_error>",
    )


async def test_select_unknown_key() -> None:
    """SPEC §11: a key outside the enum is a validation error listing the allowed keys."""
    result = await tester.call("users", "get", _select=["name", "password"])
    assert result.blocks == (
        '<validation_error action="users/get">\n'
        '<field name="_select">Unknown field names. You sent: ["password"]. Use only these '
        "names: bounces, email, name, role, visits.</field>\n"
        f"{RECOVERY}\n</validation_error>",
    )


async def test_select_duplicates() -> None:
    """SPEC §11: a key sent twice is a validation error."""
    result = await tester.call("users", "get", _select=["name", "name"])
    assert result.blocks == (
        '<validation_error action="users/get">\n'
        '<field name="_select">Duplicate field names. You sent: ["name"]. List each name '
        f"once.</field>\n{RECOVERY}\n</validation_error>",
    )


async def test_select_errors_join_field_errors() -> None:
    """SPEC §9/§11: one envelope lists the parameter problems, then the `_select` ones."""
    result = await tester.call("users", "get", extra=1, _select=["nope"])
    assert result.text.index('name="extra"') < result.text.index('name="_select"')


async def test_huge_select_gets_a_short_answer() -> None:
    """SPEC §11: a 10,000-item `_select` is answered with a bounded envelope."""
    result = await tester.call("users", "get", _select=[f"k{i}" for i in range(10_000)])
    assert result.error_code == "VALIDATION_ERROR" and len(result.text) < 500


async def test_select_without_enable_select_is_unknown() -> None:
    """SPEC §11: without enable_select() `_select` is an unknown field."""
    result = await FusionTester(sample_app).call(
        "reports", "monthly", month="2024-01", _select=["month"]
    )
    assert 'field name="_select">Unknown field.' in result.text


class Pair(BaseModel):
    """An object output with one key, `a`."""

    a: int


async def test_wrapped_structured_result_ignores_select() -> None:
    """SPEC §11/§12: a wrapped result has no top-level keys, so `_select` leaves it whole."""
    flat = Fusion("t", **PINNED)
    tool = flat.tool("r", exposition="flat").enable_select()
    tool.action("one", output_schema=Pair)(lambda: {"a": 1})
    tool.action("many", output_schema=list[int])(lambda: [1, 2])
    result = await FusionTester(flat).call("r", "many", _select=["a"])
    assert result.structured_content == {"result": [1, 2]}
    assert result.blocks == ('{\n  "result": [\n    1,\n    2\n  ]\n}',)
