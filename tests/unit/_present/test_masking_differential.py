"""The fast masking path against the model path, on generated schemas and rows.

The fast path rewrites pydantic-core's model schema into typed dicts (a layout pydantic
does not promise), so this property pins that both paths agree on every schema it accepts:
the same output, or both rejecting the same rows.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError, create_model

from mcpfusion._present.masking import Mask

# Field types and, for each, values that fit it (and some that do not, drawn below).
_TYPES: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (int, st.integers(-(10**6), 10**6)),
    (str, st.text(max_size=8)),
    (float, st.floats(allow_nan=False, allow_infinity=False)),
    (bool, st.booleans()),
    (int | None, st.none() | st.integers(0, 9)),
    (list[int], st.lists(st.integers(0, 9), max_size=3)),
    (dict[str, int], st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=3)),
    (Literal["paid", "due"], st.sampled_from(["paid", "due"])),
    (dt.date, st.dates().map(lambda d: d.isoformat())),
]
_JUNK = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.lists(st.integers()))

_NAMES = st.lists(
    st.sampled_from(["id", "name", "amount", "status", "when", "tags", "meta", "note"]),
    min_size=1,
    max_size=5,
    unique=True,
)


@st.composite
def schemas(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, st.SearchStrategy[Any]]]:
    """A model of 1-5 fields (some with defaults, one maybe a nested model) and row values."""
    fields: dict[str, Any] = {}
    values: dict[str, st.SearchStrategy[Any]] = {}
    for index, name in enumerate(draw(_NAMES)):
        if index == 0 and draw(st.booleans()):
            inner, inner_values = draw(schemas_flat())
            fields[name] = (inner, ...)
            values[name] = st.fixed_dictionaries(inner_values)
            continue
        kind, fits = draw(st.sampled_from(_TYPES))
        if kind is not dt.date and draw(st.booleans()):  # a default is a value, not its JSON
            default = draw(fits)
            if isinstance(default, list | dict):
                fields[name] = (kind, Field(default_factory=lambda d=default: d))
            else:
                fields[name] = (kind, default)
        else:
            fields[name] = (kind, ...)
        values[name] = fits
    return create_model("Generated", **fields), values


@st.composite
def schemas_flat(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, st.SearchStrategy[Any]]]:
    """A flat model of 1-3 scalar fields, for nesting."""
    fields: dict[str, Any] = {}
    values: dict[str, st.SearchStrategy[Any]] = {}
    for name in draw(_NAMES.map(lambda names: names[:3])):
        kind, fits = draw(st.sampled_from(_TYPES[:4]))
        fields[name] = (kind, ...)
        values[name] = fits
    return create_model("Inner", **fields), values


@st.composite
def cases(draw: st.DrawFn) -> tuple[type[BaseModel], list[dict[str, Any]]]:
    """A schema and 0-4 rows: fitting values, junk, missing fields and undeclared extras."""
    model, values = draw(schemas())
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        row: dict[str, Any] = {}
        for name, fits in values.items():
            choice = draw(st.integers(0, 9))
            if choice == 0:
                continue  # missing
            row[name] = draw(_JUNK) if choice == 1 else draw(fits)
        for extra in draw(st.lists(st.sampled_from(["secret", "tenant_id"]), unique=True)):
            row[extra] = draw(_JUNK)
        rows.append(row)
    return model, rows


def _run(path: Any) -> tuple[str, Any]:
    try:
        return "ok", path()
    except ValidationError as exc:
        return "error", [(e["loc"], e["type"]) for e in exc.errors()][:1]


@given(cases())
def test_fast_and_model_paths_agree(case: tuple[type[BaseModel], list[dict[str, Any]]]) -> None:
    """Dict rows give the same masked data (or the same first error) on both paths."""
    model, rows = case
    mask = Mask(model)
    fast_many = mask._fast_many
    assert fast_many is not None, "a plain generated schema takes the fast path"
    fast = _run(lambda: fast_many.validate_python(rows))
    slow = _run(lambda: mask._model_many.dump_python(mask._model_many.validate_python(rows)))
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "ok":
        assert fast[1] == slow[1]
        assert all(list(row) == [k for k in model.model_fields if k in row] for row in fast[1])
