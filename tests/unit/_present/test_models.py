"""Presenter.from_model: pydantic models and SQLAlchemy declarative classes as whitelists."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field
from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcpfusion import DefinitionError, Presenter


class Base(DeclarativeBase):
    """The declarative base of the test tables."""


class Invoice(Base):
    """The billing example's invoices table."""

    __tablename__ = "invoices"
    id: Mapped[str] = mapped_column(String, primary_key=True, comment="e.g. INV-1")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="In cents; divide by 100.")
    status: Mapped[str] = mapped_column(String)
    paid_at: Mapped[str | None] = mapped_column(String, nullable=True)
    tenant_id: Mapped[str] = mapped_column(String)
    internal_notes: Mapped[str] = mapped_column(String)


class Line(Base):
    """A table whose tenant column has another name, flagged in its info."""

    __tablename__ = "lines"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    invoice_id: Mapped[str] = mapped_column(ForeignKey("invoices.id"))
    org: Mapped[str] = mapped_column(String, info={"tenant": True})


ROW = {
    "id": "INV-1",
    "amount_cents": 4200,
    "status": "paid",
    "paid_at": None,
    "tenant_id": "t-1",
    "internal_notes": "call the CFO",
}


def test_sqlalchemy_columns_become_the_whitelist() -> None:
    """Columns are fields, comments descriptions; excluded and tenant columns never leave."""
    view = Presenter.from_model(Invoice, exclude=["internal_notes"])
    assert view.name == "Invoice" and view.tenant_column == "tenant_id"
    assert list(view.schema.model_fields) == ["id", "amount_cents", "status", "paid_at"]
    assert view.schema.model_fields["amount_cents"].description == "In cents; divide by 100."
    sent = json.loads(view.present(Invoice(**ROW)).blocks[0])
    assert sent == {"id": "INV-1", "amount_cents": 4200, "status": "paid", "paid_at": None}


def test_a_tenant_column_is_recognised_by_its_info() -> None:
    """A column with info={"tenant": True} is the tenant, whatever its name."""
    view = Presenter.from_model(Line, name="InvoiceLine", limit=10)
    assert (view.name, view.tenant_column, view.limit) == ("InvoiceLine", "org", 10)
    assert "org" not in view.schema.model_fields


def test_the_tenant_can_be_named_or_kept() -> None:
    """tenant= names the column; tenant="" keeps every column in the whitelist."""
    assert Presenter.from_model(Invoice, tenant="status").tenant_column == "status"
    kept = Presenter.from_model(Invoice, tenant="")
    assert kept.tenant_column is None and "tenant_id" in kept.schema.model_fields


def test_pydantic_models_keep_their_types_and_descriptions() -> None:
    """A pydantic model's fields are copied with their descriptions, minus the excluded."""

    class Customer(BaseModel):
        id: str
        email: str = Field(description="Contact address.")
        password_hash: str
        tenant: str

    view = Presenter.from_model(Customer, exclude=["password_hash"])
    assert list(view.schema.model_fields) == ["id", "email"]
    assert view.schema.model_fields["email"].description == "Contact address."
    assert view.tenant_column == "tenant"


def test_mistakes_fail_at_definition_time() -> None:
    """Unknown excluded names, unknown tenants and other classes are definition errors."""
    with pytest.raises(DefinitionError, match="exclude names secret"):
        Presenter.from_model(Invoice, exclude=["secret"])
    with pytest.raises(DefinitionError, match="tenant 'org' is not a field"):
        Presenter.from_model(Invoice, tenant="org")
    with pytest.raises(DefinitionError, match="takes a pydantic model or a SQLAlchemy"):
        Presenter.from_model(dict)
    with pytest.raises(DefinitionError, match="exclude takes a list"):
        Presenter.from_model(Invoice, exclude="internal_notes")
