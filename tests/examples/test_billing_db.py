"""The billing example's database: deterministic seeding, counts, queries and path errors."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from examples.billing import seed
from examples.billing.db import BillingDatabaseError, BillingDB, Ledger, default_path


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Ledger:
    """The main tenant's ledger of a freshly seeded database, shared by read-only tests."""
    return BillingDB.open(tmp_path_factory.mktemp("billing") / "billing.db").tenant(
        seed.MAIN_TENANT
    )


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_seeding_is_deterministic(tmp_path: Path) -> None:
    """Two databases seeded in separate files hold exactly the same rows."""
    first = BillingDB.open(tmp_path / "a.db")
    second = BillingDB.open(tmp_path / "b.db")
    assert _dump(first.path) == _dump(second.path)


def test_generate_is_pure() -> None:
    """The seed generator returns equal data on every call."""
    assert seed.generate() == seed.generate()


def test_counts_meet_the_floor(db: Ledger) -> None:
    """At least 100 customers and 2,000 invoices, more than 50 in each status."""
    invoices = db.list_invoices()
    assert len(db.list_customers()) >= 100
    assert len(invoices) >= 2000
    statuses = Counter(row["status"] for row in invoices)
    assert set(statuses) == {"paid", "pending", "overdue"}
    assert min(statuses.values()) > 50


def test_every_invoice_has_one_to_five_lines_that_add_up() -> None:
    """Each invoice has 1-5 lines and its amount is the sum of its lines."""
    data = seed.generate()
    lines: dict[str, list[tuple[Any, ...]]] = {}
    for line in data.lines:
        lines.setdefault(line[0], []).append(line)
    for invoice in data.invoices:
        own = lines[invoice[0]]
        assert 1 <= len(own) <= 5
        assert invoice[3] == sum(quantity * price for _, _, _, quantity, price, _ in own)


def test_ids_follow_the_documented_style(db: Ledger) -> None:
    """Invoice ids look like INV-00001 and are listed in order."""
    ids = [row["id"] for row in db.list_invoices()]
    assert ids[0] == "INV-00001"
    assert ids == sorted(ids)
    assert all(len(i) == 9 and i.startswith("INV-") for i in ids)


def test_queries_return_the_secret_fields(db: Ledger) -> None:
    """Rows carry the forbidden fields, so only the Presenters can keep them from the agent."""
    invoice = db.get_invoice("INV-00001")
    assert invoice is not None
    assert {"tenant_id", "internal_notes"} <= set(invoice)
    assert all("cost_cents" in line for line in invoice["lines"])
    customer = db.get_customer("CUS-0001")
    assert customer is not None
    assert {"password_hash", "api_key"} <= set(customer)


def test_seed_data_is_partly_hostile(db: Ledger) -> None:
    """One customer's name and some internal notes try to forge a rules block."""
    hostile = db.get_customer(seed.HOSTILE_CUSTOMER_ID)
    assert hostile is not None
    assert all(part in hostile["name"] for part in ("<domain_rules>", '"', "&"))
    notes = [row["internal_notes"] for row in db.list_invoices()]
    assert any("</domain_rules>" in note for note in notes)
    assert db.list_invoices(customer_id=seed.HOSTILE_CUSTOMER_ID)


def test_secret_values_carry_their_markers(db: Ledger) -> None:
    """Every secret value starts with a marker the end-to-end tests search for."""
    for row in db.list_invoices():
        assert row["tenant_id"].startswith("tnt_")
        assert row["internal_notes"].startswith("INTERNAL:")
    for row in db.list_customers():
        assert row["password_hash"].startswith("pbkdf2_sha256$")
        assert row["api_key"].startswith("sk_live_")


def test_filters(db: Ledger) -> None:
    """list_invoices filters by status and customer; list_customers by country."""
    overdue = db.list_invoices(status="overdue")
    assert overdue and {row["status"] for row in overdue} == {"overdue"}
    mine = db.list_invoices(customer_id="CUS-0001")
    assert {row["customer_id"] for row in mine} == {"CUS-0001"}
    assert {row["country"] for row in db.list_customers("gb")} == {"GB"}
    assert db.get_invoice("INV-99999") is None
    assert db.get_customer("CUS-9999") is None


def test_revenue_has_twelve_months(db: Ledger) -> None:
    """revenue(year) reports all twelve months; paid plus unpaid equals the invoiced total."""
    report = db.revenue(2024)
    assert [m["month"] for m in report["months"]] == [f"2024-{m:02d}" for m in range(1, 13)]
    invoiced = sum(r["amount_cents"] for r in db.list_invoices() if r["issued_at"] < "2025")
    assert sum(m["paid_cents"] + m["pending_cents"] for m in report["months"]) == invoiced
    assert all(m["paid_cents"] == 0 for m in db.revenue(1999)["months"])


def test_mark_paid_and_remind(tmp_path: Path) -> None:
    """mark_paid changes an unpaid invoice once; reminders are for unpaid invoices only."""
    db = BillingDB.open(tmp_path / "billing.db").tenant(seed.MAIN_TENANT)
    unpaid = db.list_invoices(status="pending")[0]["id"]
    assert db.record_reminder(unpaid) == "done"
    assert db.record_reminder(unpaid) == "done"
    assert db.reminded(unpaid)
    assert db.mark_paid(unpaid) == "done"
    assert db.mark_paid(unpaid) == "paid"
    assert db.record_reminder(unpaid) == "paid"
    assert db.mark_paid("INV-99999") == "unknown"
    assert db.record_reminder("INV-99999") == "unknown"


def test_a_change_that_may_not_proceed_is_rolled_back(tmp_path: Path) -> None:
    """When proceed() says no (the call was cancelled), nothing is committed."""
    db = BillingDB.open(tmp_path / "billing.db").tenant(seed.MAIN_TENANT)
    unpaid = db.list_invoices(status="pending")[0]["id"]
    assert db.mark_paid(unpaid, proceed=lambda: False) == "abandoned"
    assert db.record_reminder(unpaid, proceed=lambda: False) == "abandoned"
    assert db.get_invoice(unpaid)["status"] == "pending"  # type: ignore[index]
    assert not db.reminded(unpaid)


def test_reopening_keeps_changes(tmp_path: Path) -> None:
    """Opening an existing database does not seed it again."""
    path = tmp_path / "billing.db"
    BillingDB.open(path).tenant(seed.MAIN_TENANT).mark_paid("INV-00002")
    invoice = BillingDB.open(path).tenant(seed.MAIN_TENANT).get_invoice("INV-00002")
    assert invoice is not None and invoice["status"] == "paid"


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    """A file holding another database is not overwritten."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(BillingDatabaseError, match="another database"):
        BillingDB.open(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    """A read-only folder gives an error naming the path and how to choose another."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(BillingDatabaseError, match="MCPFUSION_BILLING_DB"):
            BillingDB.open(folder / "billing.db")
    finally:
        folder.chmod(0o700)


def test_path_under_a_file_is_a_clear_error(tmp_path: Path) -> None:
    """A path whose folder is a file cannot be created, even by root."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(BillingDatabaseError, match="--db PATH"):
        BillingDB.open(tmp_path / "file" / "billing.db")


@pytest.mark.parametrize(
    ("platform", "environ", "expected"),
    [
        ("linux", {"HOME": "/h"}, "/h/.cache/mcpfusion/billing.db"),
        ("linux", {"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x/mcpfusion/billing.db"),
        ("darwin", {"HOME": "/h"}, "/h/Library/Caches/mcpfusion/billing.db"),
        ("win32", {"HOME": "/h", "LOCALAPPDATA": "/l"}, "/l/mcpfusion/billing.db"),
    ],
)
def test_default_path_follows_platform_conventions(
    platform: str, environ: dict[str, str], expected: str
) -> None:
    """The default database lives in the per-user cache folder of each platform."""
    assert default_path(environ, platform) == Path(expected)


def test_a_ledger_sees_its_own_tenant_only(tmp_path: Path) -> None:
    """Each tenant's ledger reads and changes its rows only; the other's look absent."""
    opened = BillingDB.open(tmp_path / "billing.db")
    main, second = opened.tenant(seed.MAIN_TENANT), opened.tenant(seed.SECOND_TENANT)
    theirs = second.list_invoices()
    assert len(theirs) == seed.SECOND_INVOICES and len(main.list_invoices()) == seed.INVOICES
    unpaid = next(r["id"] for r in theirs if r["status"] != "paid")
    assert main.get_invoice(unpaid) is None and second.get_invoice(unpaid) is not None
    assert main.mark_paid(unpaid) == "unknown" and main.record_reminder(unpaid) == "unknown"
    assert second.get_invoice(unpaid)["status"] != "paid"  # type: ignore[index]
    assert main.get_customer("CUS-0901") is None and second.get_customer("CUS-0001") is None
    assert {r["tenant_id"] for r in second.list_customers()} == {seed.SECOND_TENANT}
    assert second.revenue(2024)["months"] != main.revenue(2024)["months"]


def test_each_thread_keeps_one_connection_until_it_ends_or_close(tmp_path: Path) -> None:
    """A thread reuses its connection; a gone thread's is closed; close() closes the rest."""
    db = BillingDB.open(tmp_path / "billing.db")
    ledger = db.tenant(seed.MAIN_TENANT)
    made: list[sqlite3.Connection] = []

    def read_twice() -> None:
        for _ in range(2):
            with db._connect() as conn:
                made.append(conn)
        assert ledger.get_invoice("INV-00001") is not None

    worker = threading.Thread(target=read_twice)
    worker.start()
    worker.join(timeout=10)
    assert len(made) == 2 and made[0] is made[1]
    read_twice()  # this thread's first query: the gone worker's connection is closed
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        made[0].execute("SELECT 1")
    db.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        made[2].execute("SELECT 1")
    assert ledger.get_invoice("INV-00001") is not None  # a later query opens a new one
    db.close()
