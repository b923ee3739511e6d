"""Unit tests of mcpfusion._tools.validation: pydantic errors as SPEC §9 fields, bounded echoes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
    field_validator,
)

from mcpfusion._app.app import Fusion
from mcpfusion._present.failures import preview, validation_failure
from mcpfusion._tools.validation import (
    MAX_FIELDS,
    arguments_problem,
    field_problems,
    select_problems,
)


class Line(BaseModel):
    """A nested model that forbids extra fields."""

    model_config = ConfigDict(extra="forbid")
    sku: str
    qty: Annotated[int, Field(ge=1)]


class Params(BaseModel):
    """Parameters of an imaginary action."""

    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, Field(max_length=5)] = ""
    kind: Literal["a", "b"] = "a"
    count: int | None = None
    lines: list[Line] = []


def _problems(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError, match=r"^\d+ validation errors? for Params\n") as info:
        Params.model_validate(arguments)
    return field_problems(info.value, arguments, ["name", "kind", "count", "lines"])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (3.5, "3.5"),
        ("héllo", '"héllo"'),
        ({"a": [1, None]}, '{"a": [1, null]}'),
        ("x" * 100, '"' + "x" * 48 + "…"),
        (object(), "a object value"),
        (10**5000, "a very large integer"),
    ],
    ids=["null", "bool", "float", "str", "dict", "long-str", "object", "huge-int"],
)
def test_preview(value: Any, text: str) -> None:
    """Values are echoed as compact JSON, cut to 50 characters, never as a repr."""
    assert preview(value) == text


def test_preview_of_deep_nesting_is_bounded() -> None:
    """A 10,000-level nesting renders only its first 50 characters."""
    deep: list[Any] = []
    for _ in range(10_000):
        deep = [deep]
    assert preview(deep) == "[" * 49 + "…"


def test_missing_field_text() -> None:
    """A missing field says so, echoes nothing, and says what to add."""
    model = create_model("M", x=(int, ...))
    missing = r"^1 validation error for M\nx\n  Field required \[type=missing,"
    with pytest.raises(ValidationError, match=missing) as info:
        model.model_validate({})
    assert field_problems(info.value, {}, ["x"]) == [
        ("x", "Field required. You sent: nothing. Add 'x' and call again.")
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"name": "toolong"},
            (
                "name",
                'String should have at most 5 characters. You sent: "toolong". Send a '
                "string that has at most 5 characters.",
            ),
        ),
        (
            {"kind": "c"},
            ("kind", "Input should be 'a' or 'b'. You sent: \"c\". Send 'a' or 'b'."),
        ),
        (
            {"count": "many"},
            (
                "count",
                "Input should be a valid integer, unable to parse string as an integer. "
                'You sent: "many". Send a valid integer.',
            ),
        ),
        (
            {"lines": [{"sku": "a", "qty": 0}]},
            (
                "lines.0.qty",
                "Input should be greater than or equal to 1. You sent: 0. Send a value "
                "greater than or equal to 1.",
            ),
        ),
        (
            {"lines": [{"sku": "a", "qty": 1, "colour": "red"}]},
            ("lines.0.colour", 'Unknown field. You sent: "red". Remove it.'),
        ),
        (
            {"colour": "red"},
            (
                "colour",
                'Unknown field. You sent: "red". Remove it; this action accepts: name, kind, '
                "count, lines.",
            ),
        ),
    ],
)
def test_field_texts(arguments: dict[str, Any], expected: tuple[str, str]) -> None:
    """Each kind of error reads: what is wrong, what was sent, how to fix it."""
    assert _problems(arguments) == [expected]


def test_union_members_collapse_to_one_field() -> None:
    """A union reports one field, at the real path, not one per member tag."""
    [(path, text)] = _problems({"count": [1]})
    assert path == "count"
    assert text.startswith("Input should be a valid integer.")


def test_unknown_field_when_nothing_is_accepted() -> None:
    """An action without parameters says so."""
    model = create_model("M", __config__=ConfigDict(extra="forbid"))
    extra = (
        r"^1 validation error for M\nx\n  Extra inputs are not permitted \[type=extra_forbidden,"
    )
    with pytest.raises(ValidationError, match=extra) as info:
        model.model_validate({"x": 1})
    assert field_problems(info.value, {"x": 1}, []) == [
        ("x", "Unknown field. You sent: 1. Remove it; this action takes no arguments.")
    ]


def test_generic_fix_for_custom_errors() -> None:
    """An error pydantic words differently still gets a fix."""

    class Positive(BaseModel):
        value: int

        @field_validator("value")
        @classmethod
        def _positive(cls, value: int) -> int:
            if value < 0:
                raise ValueError("must not be negative")
            return value

    custom = r"^1 validation error for Positive\nvalue\n  Value error, must not be negative \["
    with pytest.raises(ValidationError, match=custom) as info:
        Positive.model_validate({"value": -1})
    assert field_problems(info.value, {"value": -1}, ["value"]) == [
        (
            "value",
            "Value error, must not be negative. You sent: -1. Send a value that matches the "
            "tool's input schema.",
        )
    ]


def test_field_list_is_capped() -> None:
    """A flood of bad fields is cut to MAX_FIELDS plus one line counting the rest."""
    arguments = {f"x{i}": i for i in range(100)}
    model = create_model("M", __config__=ConfigDict(extra="forbid"))
    extra = r"^100 validation errors for M\nx0\n  Extra inputs are not permitted \["
    with pytest.raises(ValidationError, match=extra) as info:
        model.model_validate(arguments)
    problems = field_problems(info.value, arguments, [])
    assert len(problems) == MAX_FIELDS + 1
    assert problems[-1] == (
        "arguments",
        "80 more problems are not listed. You sent: 100 arguments. Fix the fields above "
        "and call again to see the rest.",
    )


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (["a"], []),
        ([], []),
        (
            None,
            [
                (
                    "_select",
                    "Expected a list of field names. You sent: null. Send a list drawn from: "
                    "a, b; omit _select for all fields.",
                )
            ],
        ),
        (
            ["a", 1, "z"],
            [("_select", 'Unknown field names. You sent: [1, "z"]. Use only these names: a, b.')],
        ),
        (
            ["a", "a", "b", "b"],
            [("_select", 'Duplicate field names. You sent: ["a", "b"]. List each name once.')],
        ),
    ],
)
def test_select_problems(raw: Any, problems: list[tuple[str, str]]) -> None:
    """`_select` must be a list of distinct allowed names."""
    assert select_problems(raw, ["a", "b"]) == problems


def test_a_huge_bad_list_gets_one_bounded_envelope() -> None:
    """200,000 bad items cost one bounded envelope, not text for every item (SPEC §9)."""
    # How long the answer takes is a bound of benchmarks/bounds.py, not of this test.

    def total(numbers: list[int]) -> int:
        return sum(numbers)

    app = Fusion("srv")
    app.tool("t", exposition="flat").action("total")(total)
    result = anyio.run(app.call_tool, "t_total", {"numbers": ["x"] * 200_000})
    assert result.text.count("<field ") == MAX_FIELDS + 1
    assert "199980 more problems are not listed." in result.text


def test_long_field_names_are_cut_like_values() -> None:
    """An unknown field's name is cut to 50 characters, as a sent value is (SPEC §9)."""
    name = "n" * 10_000
    model = create_model("M", __config__=ConfigDict(extra="forbid"))
    extra = rf"^1 validation error for M\n{name}\n  Extra inputs are not permitted \["
    with pytest.raises(ValidationError, match=extra) as info:
        model.model_validate({name: 1})
    [(path, text)] = field_problems(info.value, {name: 1}, [])
    assert path == "n" * 49 + "…"
    assert len(text) < 200


def test_long_paths_in_missing_fields_are_cut() -> None:
    """A nested path through a long key is cut, in the name and in the fix alike."""
    key = "k" * 10_000
    arguments = {"lines": {key: {"qty": 1}}}
    model = create_model("M", lines=(dict[str, Line], ...))
    missing = rf"^1 validation error for M\nlines\.{key}\.sku\n  Field required \[type=missing,"
    with pytest.raises(ValidationError, match=missing) as info:
        model.model_validate(arguments)
    [(path, text)] = field_problems(info.value, arguments, ["lines"])
    assert path == "lines." + "k" * 43 + "…"
    assert text == f"Field required. You sent: nothing. Add '{path}' and call again."


def test_fields_that_share_a_cut_name_stay_apart() -> None:
    """Two places whose names are cut alike are still two fields, and both are counted."""
    key = "k" * 100
    arguments = {"lines": {key: ["x"] * 30}}
    model = create_model("M", lines=(dict[str, list[int]], ...))
    not_int = rf"^30 validation errors for M\nlines\.{key}\.0\n  Input should be a valid integer"
    with pytest.raises(ValidationError, match=not_int) as info:
        model.model_validate(arguments)
    problems = field_problems(info.value, arguments, ["lines"])
    assert len(problems) == MAX_FIELDS + 1
    assert problems[-1][1].startswith("10 more problems are not listed.")


def test_a_bad_dict_key_echoes_the_key() -> None:
    """A key that fails its type is reported at its place, echoing the key itself."""
    arguments = {"m": {"abc": "v"}}
    model = create_model("M", m=(dict[int, str], ...))
    bad_key = r"^1 validation error for M\nm\.abc\.\[key\]\n  Input should be a valid integer"
    with pytest.raises(ValidationError, match=bad_key) as info:
        model.model_validate(arguments)
    assert field_problems(info.value, arguments, ["m"]) == [
        (
            "m.abc",
            "Input should be a valid integer, unable to parse string as an integer. You sent: "
            '"abc". Send a valid integer.',
        )
    ]


def test_arguments_problem_and_envelope() -> None:
    """Non-object arguments become one field of a <validation_error> result."""
    result = validation_failure("t/a", [arguments_problem(5)])
    assert result.is_error
    assert result.blocks == (
        '<validation_error action="t/a">\n'
        '<field name="arguments">Expected an object of named arguments. You sent: 5. Send a '
        "JSON object.</field>\n"
        "<recovery>Fix the fields above and call the tool again.</recovery>\n"
        "</validation_error>",
    )


def test_a_functions_argument_errors_read_like_a_models() -> None:
    """Missing and unexpected arguments of a function (as hosts validate) read the same."""

    def tool(user_id: int) -> None: ...

    sent = {"verbose": True}
    with pytest.raises(ValidationError, match="2 validation errors") as caught:
        TypeAdapter(tool).validate_python(sent)  # type: ignore[arg-type]  # a function: its arguments
    problems = dict(field_problems(caught.value, sent, ["user_id"]))
    assert problems == {
        "user_id": "Field required. You sent: nothing. Add 'user_id' and call again.",
        "verbose": "Unknown field. You sent: true. Remove it; this action accepts: user_id.",
    }
