"""Unit tests for _present.masking: the typed-dict rewrite, its fallbacks and its errors."""

from __future__ import annotations

import dataclasses
import gc
import re
import sqlite3
from types import MappingProxyType
from typing import Any, Literal, Optional

import pytest
from pydantic import (
    MISSING,
    AliasChoices,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    ValidationError,
    ValidationInfo,
    computed_field,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict

from mcpfusion import DefinitionError, Presenter, PresenterError
from mcpfusion._present.masking import Mask


def fast(mask: Mask) -> bool:
    """Whether the mask validates through the typed-dict rewrite."""
    return mask._fast_one is not None and mask._fast_many is not None


class Defaults(BaseModel):
    """Fields with defaults, a factory, an Optional without default and an alias."""

    required: str
    number: int = 7
    tags: list[str] = Field(default_factory=lambda: ["new"])
    maybe: Optional[int]  # noqa: UP045  # the typing spelling is what users write too
    also_maybe: int | None = None
    renamed: str = Field(validation_alias=AliasChoices("renamedAs", "old_name"))


def test_defaults_are_filled_and_optional_without_default_is_required() -> None:
    """The rewrite fills defaults and factories; Optional without a default stays required."""
    mask = Mask(Defaults)
    assert fast(mask)
    row = {"renamedAs": "r", "maybe": None, "required": "x", "extra": 1}
    assert mask.one(row) == {
        "required": "x",
        "number": 7,
        "tags": ["new"],
        "maybe": None,
        "also_maybe": None,
        "renamed": "r",
    }
    missing = re.escape("1 validation error for typed-dict\nmaybe\n  Field required [type=missing")
    with pytest.raises(ValidationError, match=f"^{missing}") as caught:
        mask.one({"required": "x", "renamedAs": "r"})
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [(("maybe",), "missing")]


def test_default_factories_are_called_per_row() -> None:
    """Each row gets its own default list, never one shared object."""
    first, second = Mask(Defaults).many([{"required": "a", "maybe": 1, "old_name": "n"}] * 2)
    assert first["tags"] == second["tags"] == ["new"]
    assert first["tags"] is not second["tags"]
    assert first["renamed"] == "n"


def test_validation_alias_path_is_honoured() -> None:
    """A validation alias path reads a nested input key, output under the field name."""

    class Flat(BaseModel):
        city: str = Field(validation_alias=AliasPath("address", "city"))

    mask = Mask(Flat)
    assert fast(mask)
    assert mask.one({"address": {"city": "Porto", "zip": "4000"}}) == {"city": "Porto"}


class Node(BaseModel):
    """A recursive model."""

    name: str
    children: list[Node] = []


def test_recursive_models_mask_every_level() -> None:
    """Undeclared fields are dropped at every depth of a recursive schema."""
    mask = Mask(Node)
    assert fast(mask)
    tree = {"name": "a", "x": 1, "children": [{"name": "b", "y": 2, "children": [{"name": "c"}]}]}
    assert mask.one(tree) == {
        "name": "a",
        "children": [{"name": "b", "children": [{"name": "c", "children": []}]}],
    }


class Item(BaseModel):
    """A model used inside containers."""

    sku: str


class Basket(BaseModel):
    """Models in a list, a dict, an optional and a union."""

    items: list[Item]
    by_id: dict[str, Item]
    first: Item | None = None
    either: Item | int = 0


def test_models_inside_containers_are_masked() -> None:
    """Models in lists, dict values, optionals and unions are masked like top-level ones."""
    mask = Mask(Basket)
    assert fast(mask)
    row = {
        "items": [{"sku": "a", "cost": 1}],
        "by_id": {"k": {"sku": "b", "cost": 2}},
        "first": {"sku": "c", "cost": 3},
        "either": {"sku": "d", "cost": 4},
    }
    assert mask.one(row) == {
        "items": [{"sku": "a"}],
        "by_id": {"k": {"sku": "b"}},
        "first": {"sku": "c"},
        "either": {"sku": "d"},
    }


class Validated(BaseModel):
    """Field validators, one of which reads an earlier field."""

    currency: Literal["EUR", "BRL"]
    code: str
    amount: int

    @field_validator("code")
    @classmethod
    def upper(cls, value: str) -> str:
        """Normalizes the code."""
        return value.upper()

    @field_validator("amount")
    @classmethod
    def positive_for_brl(cls, value: int, info: ValidationInfo) -> int:
        """Reads an earlier field through info.data."""
        if info.data.get("currency") == "BRL" and value < 0:
            raise ValueError("BRL amounts cannot be negative")
        return value


def test_field_validators_still_run() -> None:
    """Field validators, including ones reading info.data, run on the typed-dict path."""
    mask = Mask(Validated)
    assert fast(mask)
    assert mask.one({"currency": "EUR", "code": "ab", "amount": -1}) == {
        "currency": "EUR",
        "code": "AB",
        "amount": -1,
    }
    with pytest.raises(ValidationError, match="BRL amounts cannot be negative"):
        mask.one({"currency": "BRL", "code": "ab", "amount": -1})


def test_extra_forbid_schema_still_drops_extras() -> None:
    """A schema with extra='forbid' masks extras away instead of rejecting the data."""

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        id: int

    assert Mask(Strict).many([{"id": 1, "secret": "s"}]) == [{"id": 1}]


class AfterValidated(BaseModel):
    """A model validator."""

    id: int

    @model_validator(mode="after")
    def check(self) -> AfterValidated:
        """Accepts everything."""
        return self


class BeforeValidated(BaseModel):
    """A recursive model with a before-validator."""

    id: int
    next: BeforeValidated | None = None

    @model_validator(mode="before")
    @classmethod
    def check(cls, data: Any) -> Any:
        """Accepts everything."""
        return data


class Computed(BaseModel):
    """A computed field."""

    id: int

    @computed_field  # wraps the method in a property; an explicit @property defeats mypy
    def double(self) -> int:
        """Twice the id."""
        return self.id * 2


class FieldSerialized(BaseModel):
    """A field serializer."""

    id: int

    @field_serializer("id")
    def as_text(self, value: int) -> str:
        """Writes the id as text."""
        return f"#{value}"


class ModelSerialized(BaseModel):
    """A model serializer."""

    id: int

    @model_serializer
    def dump(self) -> dict[str, Any]:
        """Writes a different shape."""
        return {"ID": self.id}


class Aliased(BaseModel):
    """A serialization alias."""

    id: int = Field(alias="ID")


class Excluded(BaseModel):
    """An excluded field."""

    id: int
    secret: str = Field(default="", exclude=True)


class ExcludedIfNone(BaseModel):
    """A field excluded when it is None."""

    id: int
    note: str | None = Field(default=None, exclude_if=lambda value: value is None)


class PostInit(BaseModel):
    """A model_post_init hook."""

    id: int

    def model_post_init(self, context: Any) -> None:
        """Does nothing, but needs an instance."""


class Holder(BaseModel):
    """A plain model holding one that needs instances."""

    inner: list[AfterValidated]


@pytest.mark.parametrize(
    ("model", "row", "expected"),
    [
        (AfterValidated, {"id": 1, "x": 0}, {"id": 1}),
        (
            BeforeValidated,
            {"id": 1, "next": {"id": 2, "x": 0}},
            {"id": 1, "next": {"id": 2, "next": None}},
        ),
        (Computed, {"id": 2, "x": 0}, {"id": 2, "double": 4}),
        (FieldSerialized, {"id": 3}, {"id": "#3"}),
        (ModelSerialized, {"id": 4}, {"ID": 4}),
        (Aliased, {"ID": 5, "x": 0}, {"id": 5}),
        (Excluded, {"id": 6, "secret": "s"}, {"id": 6}),
        (ExcludedIfNone, {"id": 7}, {"id": 7}),
        (PostInit, {"id": 8, "x": 0}, {"id": 8}),
        (Holder, {"inner": [{"id": 9, "x": 0}]}, {"inner": [{"id": 9}]}),
    ],
)
def test_instance_only_features_take_the_model_path(
    model: type[BaseModel], row: dict[str, Any], expected: dict[str, Any]
) -> None:
    """Schemas whose output depends on instances keep the model path and its behaviour."""
    mask = Mask(model)
    assert not fast(mask)
    assert mask.one(row) == expected
    assert mask.many([row, row]) == [expected, expected]


class Loose(BaseModel):
    """A model that keeps undeclared fields."""

    model_config = ConfigDict(extra="allow")
    id: int


@with_config(ConfigDict(extra="allow"))
class LooseDict(TypedDict):
    """A typed dict that keeps undeclared fields."""

    id: int


class HoldsLoose(BaseModel):
    """A plain model with a loose model inside a list."""

    items: list[Loose]


class HoldsLooseDict(BaseModel):
    """A plain model with a loose typed dict inside."""

    item: LooseDict


@pytest.mark.parametrize("model", [Loose, HoldsLoose, HoldsLooseDict])
def test_extra_allow_anywhere_is_a_definition_error(model: type[BaseModel]) -> None:
    """A schema that would keep undeclared fields cannot be a whitelist: fail at definition."""
    with pytest.raises(DefinitionError, match="extra='allow'"):
        Mask(model)


def test_keys_are_sent_fields_then_computed_fields() -> None:
    """The top-level keys leave out excluded fields and add computed ones."""
    assert Mask(Excluded).keys == ("id",)
    assert Mask(Computed).keys == ("id", "double")
    assert Mask(Defaults).keys == (
        "required",
        "number",
        "tags",
        "maybe",
        "also_maybe",
        "renamed",
    )


@dataclasses.dataclass
class ItemRecord:
    """A dataclass row."""

    sku: str
    cost: int


class Record:
    """A plain object row."""

    def __init__(self, sku: Any) -> None:
        self.sku = sku
        self.cost = 1


def test_objects_take_the_model_path() -> None:
    """Objects, dataclasses and model instances are read by attribute."""
    mask = Mask(Item)
    assert mask.one(ItemRecord("a", 1)) == {"sku": "a"}
    assert mask.many([Record("b"), ItemRecord("c", 2), {"sku": "d", "cost": 3}]) == [
        {"sku": "b"},
        {"sku": "c"},
        {"sku": "d"},
    ]


def test_object_rows_report_the_failing_row() -> None:
    """When objects fail, the error comes from the path that reads objects."""
    rows = [Record(f"s{n}") for n in range(5)]
    rows[3].sku = None
    message = "1 validation error for list[Item]\n3.sku\n  Input should be a valid string"
    with pytest.raises(ValidationError, match=f"^{re.escape(message)}") as caught:
        Mask(Item).many(rows)
    assert caught.value.errors()[0]["loc"] == (3, "sku")


def test_dict_rows_report_the_typed_dict_error() -> None:
    """For dicts, the typed-dict error wins: extra='forbid' complaints never hide the cause."""

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        id: int

    rows: list[dict[str, Any]] = [{"id": n, "secret": "s"} for n in range(5)]
    rows[3]["id"] = "three"
    message = "1 validation error for list[typed-dict]\n3.id\n  Input should be a valid integer"
    with pytest.raises(ValidationError, match=f"^{re.escape(message)}") as caught:
        Mask(Strict).many(rows)
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [((3, "id"), "int_parsing")]


def test_tuples_and_mappings_are_accepted() -> None:
    """A tuple of rows and mapping rows validate like lists and dicts."""
    assert Mask(Item).many((MappingProxyType({"sku": "a", "x": 1}),)) == [{"sku": "a"}]


def test_collector_is_paused_for_large_lists_and_restored() -> None:
    """A Presenter masks large lists with the collector paused; it is re-enabled on errors."""
    seen: list[bool] = []

    class Spy(BaseModel):
        id: int

        @field_validator("id")
        @classmethod
        def record(cls, value: int) -> int:
            """Records whether the collector is running."""
            seen.append(gc.isenabled())
            return value

    presenter = Presenter("Spy", Spy)
    assert gc.isenabled()
    presenter.present([{"id": 1}] * 10)
    assert seen == [True] * 10
    seen.clear()
    presenter.present([{"id": 1}] * 5_000)
    assert set(seen) == {False}
    assert gc.isenabled()
    with pytest.raises(PresenterError, match="item 4999"):
        presenter.present([{"id": 1}] * 4_999 + [{"id": "x"}])
    assert gc.isenabled()


def test_collector_left_alone_when_already_disabled() -> None:
    """If the caller disabled the collector, masking does not turn it back on."""
    gc.disable()
    try:
        Mask(Item).many([{"sku": "a"}] * 5_000)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_dataclass_subclass_fields_never_leak() -> None:
    """SPEC §5.1: a dataclass value carries only its declared fields, even from a subclass."""

    @dataclasses.dataclass
    class Address:
        city: str

    @dataclasses.dataclass
    class FullAddress(Address):
        secret: str

    class Person(BaseModel):
        name: str
        address: Address

    row = {"name": "n", "address": FullAddress("Lisbon", "SECRET"), "x": 1}
    mask = Mask(Person)
    assert mask.one(row) == {"name": "n", "address": {"city": "Lisbon"}}
    assert mask.many([row]) == [{"name": "n", "address": {"city": "Lisbon"}}]


def test_lists_of_model_instances_are_masked_by_the_model_path() -> None:
    """Rows that are model instances are masked once, by schema, with extras dropped."""

    class Wide(BaseModel):
        x: int
        secret: str

    class Narrow(BaseModel):
        x: int

    rows = [Wide(x=n, secret="s") for n in range(3)]
    assert Mask(Narrow).many(rows) == [{"x": 0}, {"x": 1}, {"x": 2}]


class MaybeEmail(BaseModel):
    """A field that may be absent (pydantic's MISSING sentinel)."""

    id: int
    email: str | MISSING = MISSING


def test_missing_field_stays_on_the_fast_path_and_is_absent() -> None:
    """A MISSING default keeps the typed-dict path; a row without the key masks without it."""
    mask = Mask(MaybeEmail)
    assert fast(mask)
    assert mask.many([{"id": 1}, {"id": 2, "email": "e"}]) == [{"id": 1}, {"id": 2, "email": "e"}]
    assert mask.one({"id": 1, "email": MISSING}) == {"id": 1}


def test_sqlite_rows_take_the_fast_path() -> None:
    """sqlite3.Row rows (keys() and [key]) mask like dicts, extras dropped."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE t (id INTEGER, email TEXT, secret TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(1, "a@x", "s"), (2, "b@x", "s")])
    rows = conn.execute("SELECT * FROM t").fetchall()
    mask = Mask(MaybeEmail)
    assert mask.many(rows) == [{"id": 1, "email": "a@x"}, {"id": 2, "email": "b@x"}]
    assert mask.one(rows[0]) == {"id": 1, "email": "a@x"}
    assert mask.many(list(MappingProxyType(dict(row)) for row in rows))[1] == {
        "id": 2,
        "email": "b@x",
    }


class KeyedRow:
    """A row read by key that is not a Mapping, the shape of many database drivers' rows."""

    def __init__(self, **values: Any) -> None:
        self._values = values

    def keys(self) -> list[str]:
        """The column names."""
        return list(self._values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]


def test_mapping_like_rows_are_read_by_key_and_errors_name_the_row() -> None:
    """Any row with keys() and [key] is accepted; a bad one is named by its index."""
    mask = Mask(MaybeEmail)
    assert mask.many([KeyedRow(id=1), KeyedRow(id=2, email="e")]) == [
        {"id": 1},
        {"id": 2, "email": "e"},
    ]
    with pytest.raises(ValidationError, match=r"1\.id\n  Input should be a valid integer"):
        mask.many([KeyedRow(id=1), KeyedRow(id="x")])


def test_root_model_of_a_model_masks_as_the_model() -> None:
    """A RootModel[Model] schema keeps the fast path and the model's keys."""

    class Wrapped(RootModel[MaybeEmail]):
        pass

    mask = Mask(Wrapped)
    assert fast(mask)
    assert mask.keys == ("id", "email")
    assert mask.one({"id": 1, "x": 2}) == {"id": 1}
