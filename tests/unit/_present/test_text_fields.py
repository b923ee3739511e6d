"""Unit tests of _present.text_fields: the schema's text fields, and the search reading them."""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import AfterValidator, BaseModel, field_validator

from mcpfusion import Presenter
from mcpfusion._present.text_fields import TEXT, WALK, text_fields


class Address(BaseModel):
    """A nested model."""

    street: str
    zip_code: int


class Person(BaseModel):
    """A row with every kind of field."""

    name: str
    nick: str | None = None
    age: int
    born: datetime.date
    level: Literal["low", "high"]
    tags: list[str] = []
    code: int | str = 0
    shown: Annotated[int, AfterValidator(lambda value: f"n={value}")] = 0
    home: Address | None = None


class Checked(BaseModel):
    """A model whose validator may give a field another type."""

    age: int

    @field_validator("age")
    @classmethod
    def _keep(cls, value: int) -> int:
        return value


def test_fields_by_what_they_can_hold() -> None:
    """Strings are text, scalars never, a Literal its longest string, the rest is walked."""
    assert text_fields(Person) == {
        "name": TEXT,
        "nick": TEXT,
        "age": None,
        "born": None,
        "level": 4,
        "tags": WALK,
        "code": WALK,
        "shown": WALK,
        "home": {"street": TEXT, "zip_code": None},
    }


def test_a_validator_or_serializer_leaves_the_schema_unread() -> None:
    """A model validator or serializer may change a field's type: nothing is assumed."""
    assert text_fields(Checked) is None


class Note(BaseModel):
    """A row whose free text may quote a redacted value."""

    secret: str | None
    note: str | None = None
    kind: Literal["token-secret-1", "other"] = "other"
    count: Annotated[int, AfterValidator(lambda value: f"token-secret-{value}")] = 0
    home: Address | None = None


class Line(BaseModel):
    """An embedded child's row."""

    text: str


ROWS: list[dict[str, Any]] = [
    {"secret": "token-secret-1", "note": "it is token-secret-2", "count": 2, "kind": "other"},
    {"secret": "token-secret-2", "note": None, "kind": "token-secret-1", "lines": []},
    {"secret": None, "note": "no trace", "home": {"street": "token-secret-1 st", "zip_code": 1}},
    {"secret": "token-secret-3", "lines": [{"text": "see token-secret-3"}], "count": 1},
]


def _presenters(**options: Any) -> tuple[Presenter, Presenter]:
    """The same Presenter twice; the second walks every value, as without a schema."""
    made = []
    for _ in range(2):
        view = Presenter("Note", Note, redact=["secret"], **options)
        made.append(view.embed("lines", Presenter("Line", Line)))
    assert made[0]._text_fields is not None  # the schema is read: what this test compares
    made[1]._text_fields = None
    return made[0], made[1]


@pytest.mark.parametrize("censor", ["[REDACTED]", "hides token-secret-1", lambda v: v[::-1]])
@pytest.mark.parametrize("select", [None, ["secret", "note"], ["home", "lines"]])
def test_reading_by_the_schema_finds_what_walking_finds(censor: Any, select: Any) -> None:
    """Optional, Literal, validated, nested and embedded fields are searched as walked."""
    planned, walked = _presenters(censor=censor)
    sent = planned.present(ROWS, select=select).text
    assert sent == walked.present(ROWS, select=select).text
    for leaked in ("it is token-secret-2", "token-secret-1 st", "see token-secret-3"):
        assert f'"{leaked}"' not in sent
