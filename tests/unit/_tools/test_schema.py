"""Unit tests of mcpfusion._tools.schema: grouped unions, flat schemas, shared $defs, conflicts."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcpfusion import DefinitionError
from mcpfusion._tools.action import Action
from mcpfusion._tools.schema import (
    ParamTypes,
    flat_input_schema,
    grouped_input_schema,
    select_property,
    sentence,
)


class Address(BaseModel):
    """A nested model two actions share."""

    city: str


def _a(name: str, handler: Any) -> Action:
    return Action("t", name, handler)


def _ship(to: Address, note: str = "") -> None: ...


def _bill(to: Address, note: str = "x") -> None: ...


def _ping() -> None: ...


def test_shared_nested_model_has_one_def() -> None:
    """Actions using the same nested model share one $defs entry."""
    schema = grouped_input_schema("t", [_a("ship", _ship), _a("bill", _bill)], None)
    assert schema["$defs"] == {
        "Address": {
            "description": "A nested model two actions share.",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "title": "Address",
            "type": "object",
        }
    }
    assert schema["properties"]["to"] == {
        "description": "Required for: ship, bill.",
        "$ref": "#/$defs/Address",
    }
    assert schema["required"] == ["action", "to"]


def test_differing_defaults_are_dropped() -> None:
    """No default is shown when the actions disagree on it."""
    schema = grouped_input_schema("t", [_a("ship", _ship), _a("bill", _bill)], None)
    assert schema["properties"]["note"] == {"description": "Used by: ship, bill.", "type": "string"}


def test_equal_defaults_are_kept() -> None:
    """A default every action agrees on is shown."""
    schema = grouped_input_schema("t", [_a("a", _ship), _a("b", _ship)], None)
    assert schema["properties"]["note"]["default"] == ""


def test_action_without_parameters() -> None:
    """A tool whose actions take nothing still has its discriminator."""
    schema = grouped_input_schema("t", [_a("ping", _ping)], None)
    assert schema == {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["ping"],
                "description": "The operation to perform; the tool description lists them.",
            }
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def test_flat_schema_without_parameters_has_no_required() -> None:
    """A flat action without parameters lists no `required`."""
    assert flat_input_schema(_a("ping", _ping), None) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_flat_schema_with_select() -> None:
    """`_select` is the last property of a flat schema."""
    schema = flat_input_schema(_a("ship", _ship), ["a", "b"])
    assert list(schema["properties"]) == ["to", "note", "_select"]
    assert schema["properties"]["_select"] == select_property(["a", "b"])
    assert "$defs" in schema


def _limit_int(limit: Annotated[int, Field(ge=1)]) -> None: ...


def _limit_int_le(limit: Annotated[int, Field(ge=1, le=5)]) -> None: ...


def _limit_described(limit: Annotated[int, Field(ge=1, description="Max rows")]) -> None: ...


def test_constraints_are_not_part_of_the_type() -> None:
    """Differently constrained parameters share a name; another base type still conflicts."""
    types = ParamTypes("t")
    types.add(_a("a", _limit_int))
    types.add(_a("b", _limit_described))
    types.add(_a("c", _limit_int_le))
    types.add(_a("d", _limit_plain))
    with pytest.raises(DefinitionError, match=r"in action 'a' but .* in action 'e'"):
        types.add(_a("e", _limit_str_with_note))


def _limit_plain(limit: int) -> None: ...


def _assignee_filter(assignee: str | None = None) -> None: ...


def _assignee_required(assignee: Annotated[str, Field(min_length=2)]) -> None: ...


def test_differing_constraints_are_described_per_action() -> None:
    """The union advertises the base type and writes each action's own constraints."""
    actions = [_a("a", _limit_int), _a("c", _limit_int_le), _a("d", _limit_plain)]
    schema = grouped_input_schema("t", actions, None)
    assert schema["properties"]["limit"] == {
        "description": "Required for: a, c, d. In a: minimum 1. In c: maximum 5, minimum 1.",
        "type": "integer",
    }


def test_optional_in_one_action_and_required_in_another() -> None:
    """An optional filter and a required field of one name: nullable, required per action."""
    types = ParamTypes("t")
    actions = [_a("find", _assignee_filter), _a("assign", _assignee_required)]
    for action in actions:
        types.add(action)
    schema = grouped_input_schema("t", actions, None)
    assert schema["properties"]["assignee"] == {
        "description": "Used by: find, assign. Required for: assign. In assign: minLength 2.",
        "anyOf": [{"type": "string"}, {"type": "null"}],
    }
    assert schema["required"] == ["action"]


def test_common_constraints_stay_on_the_type() -> None:
    """Constraints every action shares are kept in the schema, not moved to the text."""

    def optional(limit: Annotated[int, Field(ge=1)] | None = None) -> None: ...

    schema = grouped_input_schema("t", [_a("a", _limit_int), _a("b", optional)], None)
    assert schema["properties"]["limit"] == {
        "description": "Used by: a, b. Required for: a.",
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
    }


def test_first_description_wins() -> None:
    """The union shows the first description any action gives the parameter."""
    schema = grouped_input_schema("t", [_a("a", _limit_int), _a("b", _limit_described)], None)
    assert schema["properties"]["limit"]["description"] == "Max rows. Required for: a, b."


class Shop:
    """A namespace: its ``Where`` shares its name with the two below."""

    class Where(BaseModel):
        """A place by city."""

        city: str


class Home:
    """A namespace for a second ``Where`` of the same shape."""

    class Where(BaseModel):
        """A place by city."""

        city: str


class Post:
    """A namespace for a ``Where`` of another shape."""

    class Where(BaseModel):
        """A place by postal code."""

        zip: int


class Tree(BaseModel):
    """A self-referencing parameter model."""

    children: list[Tree] = []


def _where(where: Shop.Where) -> None: ...


def _where_again(where: Home.Where) -> None: ...


def _where_else(where: Post.Where) -> None: ...


def _tree(root: Tree) -> None: ...


@pytest.mark.parametrize(
    ("handlers", "conflict"),
    [
        ((_where, _where_again), False),
        ((_where, _where_else), True),
        ((_tree, _tree), False),
    ],
    ids=["same-name-same-type", "same-name-other-type", "recursive"],
)
def test_same_named_models_are_judged_by_shape(handlers: Any, conflict: bool) -> None:
    """ParamTypes compares types by shape, not by class name; the union lists one $def."""
    actions = [_a(f"a{index}", handler) for index, handler in enumerate(handlers)]
    types = ParamTypes("t")
    types.add(actions[0])
    if conflict:
        with pytest.raises(DefinitionError, match="in action 'a0' but"):
            types.add(actions[1])
    else:
        types.add(actions[1])
        schema = grouped_input_schema("t", actions, None)
        assert len(schema["$defs"]) == 1


def test_a_rejected_action_records_nothing() -> None:
    """A conflicting action leaves no trace: its other parameters stay free."""
    types = ParamTypes("t")
    types.add(_a("a", _limit_int))
    conflict = r"^tool 't': parameter 'limit' is .* in action 'a' but .* in action 'b'; "
    with pytest.raises(DefinitionError, match=conflict):
        types.add(_a("b", _limit_str_with_note))
    types.add(_a("c", _note_int))


def _limit_str_with_note(limit: str, note: str) -> None: ...


def _note_int(note: int) -> None: ...


@pytest.mark.parametrize(
    ("text", "expected"), [("", ""), ("Done", "Done."), ("Done.", "Done."), ("Why?", "Why?")]
)
def test_sentence(text: str, expected: str) -> None:
    """A full stop is added only where punctuation is missing."""
    assert sentence(text) == expected
