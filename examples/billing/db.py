"""The billing example's SQLite database: created and seeded on first open, then queried.

Every query goes through a tenant's ledger (``BillingDB.tenant``) and sees that tenant's rows
only: another tenant's invoice is as absent as one that never existed. Queries return whole
rows on purpose, secrets included (``tenant_id``, ``internal_notes``, ``password_hash``,
``api_key``, ``cost_cents``): keeping them away from the agent is the Presenters' job, and
the end-to-end tests prove they do it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from examples.billing import seed

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE customers (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, country TEXT NOT NULL,
    password_hash TEXT NOT NULL, api_key TEXT NOT NULL, tenant_id TEXT NOT NULL
);
CREATE TABLE invoices (
    id TEXT PRIMARY KEY, number TEXT NOT NULL UNIQUE,
    customer_id TEXT NOT NULL REFERENCES customers(id),
    amount_cents INTEGER NOT NULL, currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('paid', 'pending', 'overdue')),
    issued_at TEXT NOT NULL, due_at TEXT NOT NULL, tenant_id TEXT NOT NULL,
    internal_notes TEXT NOT NULL
);
CREATE INDEX invoices_customer ON invoices (customer_id);
CREATE INDEX invoices_tenant ON invoices (tenant_id);
CREATE TABLE invoice_lines (
    id INTEGER PRIMARY KEY, invoice_id TEXT NOT NULL REFERENCES invoices(id),
    sku TEXT NOT NULL, description TEXT NOT NULL, quantity INTEGER NOT NULL,
    unit_price_cents INTEGER NOT NULL, cost_cents INTEGER NOT NULL
);
CREATE INDEX invoice_lines_invoice ON invoice_lines (invoice_id);
CREATE TABLE reminders (
    invoice_id TEXT PRIMARY KEY REFERENCES invoices(id), first_sent_at TEXT NOT NULL
);
"""

_INVOICE_SELECT = """
SELECT i.id, i.number, i.customer_id, c.name AS customer_name, i.amount_cents, i.currency,
       i.status, i.issued_at, i.due_at, i.tenant_id, i.internal_notes
FROM invoices AS i JOIN customers AS c ON c.id = i.customer_id
"""


Outcome = Literal["done", "unknown", "paid", "abandoned"]
"""What a change to one invoice came to."""


def _always() -> bool:
    return True


class BillingDatabaseError(Exception):
    """The database file cannot be created, opened or written."""


def default_path(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    """The per-user cache location of the database, by the platform's conventions.

    Args:
        environ: the process environment (passed in, so only the entry point reads it).
        platform: ``sys.platform``.
    """
    home = Path(environ.get("HOME") or Path.home())
    if platform == "win32":
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        base = Path(environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "mcpfusion" / "billing.db"


class BillingDB:
    """The billing database at ``path``; use ``BillingDB.open`` to create and seed it.

    Each thread keeps one connection, made on its first query: one instance serves
    concurrent requests (each worker thread its own connection) and several server
    processes can share the file. A new connection parses the schema on its first query,
    which made a per-call connection cost 310 µs a read against 35 µs on a kept one.
    ``close()`` closes them all (the app's lifespan calls it on shutdown).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> BillingDB:
        """Opens the database at ``path``, creating and seeding it if it does not exist yet.

        Raises:
            BillingDatabaseError: if the file or its folder cannot be created or written, or
                the file holds something other than this example's data.
        """
        target = Path(path).expanduser()
        hint = "Pass --db PATH or set MCPFUSION_BILLING_DB to a writable file."
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BillingDatabaseError(
                f"cannot create the folder {target.parent}: {exc.strerror}. {hint}"
            ) from None
        writable = (
            os.access(target, os.W_OK) if target.exists() else os.access(target.parent, os.W_OK)
        )
        if not writable:
            raise BillingDatabaseError(f"{target} is not writable. {hint}")
        db = cls(target)
        try:
            db._seed_once()
            db._wal()
        except sqlite3.Error as exc:
            raise BillingDatabaseError(f"cannot open {target}: {exc}. {hint}") from None
        finally:
            db.close()  # the opening thread's connection: queries run on others
        return db

    def _wal(self) -> None:
        """Write-ahead logging: readers never wait for a writer (the file remembers it)."""
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (in autocommit mode: transactions are explicit)."""
        thread = threading.current_thread()
        conn = self._connections.get(thread)
        if conn is None:
            conn = self._connection_for(thread)
        yield conn

    def _connection_for(self, thread: threading.Thread) -> sqlite3.Connection:
        # Made here, used by ``thread`` only; closed by close() or once the thread is gone
        # (worker threads come and go), hence check_same_thread=False.
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        with self._lock:
            for gone in [t for t in self._connections if not t.is_alive()]:
                self._connections.pop(gone).close()
            self._connections[thread] = conn
        return conn

    def close(self) -> None:
        """Closes every thread's connection; a later query opens a new one."""
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        for conn in connections:
            conn.close()

    def _seed_once(self) -> None:
        with self._connect() as conn:
            # IMMEDIATE takes the write lock first, so two processes starting at once on a
            # new file seed it exactly once.
            conn.execute("BEGIN IMMEDIATE")
            try:
                has_meta = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
                ).fetchone()
                if has_meta:
                    row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
                    if row is None or row[0] != seed.SEED_VERSION:
                        raise BillingDatabaseError(
                            f"{self.path} was not seeded by this version of the example; "
                            "delete it to start over"
                        )
                elif conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise BillingDatabaseError(
                        f"{self.path} holds another database; choose another path"
                    )
                else:
                    _seed(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def tenant(self, tenant_id: str) -> Ledger:
        """The queries of one tenant: the only way to read or change billing data."""
        return Ledger(self, tenant_id)


class Ledger:
    """One tenant's view of the database: every query is scoped by ``tenant_id``."""

    def __init__(self, db: BillingDB, tenant_id: str) -> None:
        if not tenant_id:
            raise ValueError("a ledger needs a tenant")
        self._connect = db._connect
        self.tenant_id = tenant_id

    def list_invoices(
        self,
        status: str | None = None,
        customer_id: str | None = None,
        *,
        offset: int = 0,
        limit: int = -1,
    ) -> list[dict[str, Any]]:
        """Invoices in id order, optionally filtered by status and customer.

        ``offset`` and ``limit`` read one page of them (``-1``: no limit, SQLite's own).
        """
        where, args = self._invoice_filter(status, customer_id)
        sql = _INVOICE_SELECT + " WHERE " + where + " ORDER BY i.id LIMIT ? OFFSET ?"
        with self._connect() as conn:
            return [dict(row) for row in conn.execute(sql, [*args, limit, offset])]

    def count_invoices(self, status: str | None = None, customer_id: str | None = None) -> int:
        """How many invoices ``list_invoices`` would list without a limit."""
        where, args = self._invoice_filter(status, customer_id)
        with self._connect() as conn:
            sql = "SELECT COUNT(*) FROM invoices AS i WHERE " + where
            count: int = conn.execute(sql, args).fetchone()[0]
            return count

    def _invoice_filter(self, status: str | None, customer_id: str | None) -> tuple[str, list[str]]:
        """The WHERE clause (and its arguments) of the tenant's invoices, filtered."""
        where, args = ["i.tenant_id = ?"], [self.tenant_id]
        if status is not None:
            where.append("i.status = ?")
            args.append(status)
        if customer_id is not None:
            where.append("i.customer_id = ?")
            args.append(customer_id)
        return " AND ".join(where), args

    def get_invoice(self, invoice_id: str) -> dict[str, Any] | None:
        """One invoice with its ``lines``, or ``None`` if the tenant has no such invoice."""
        with self._connect() as conn:
            row = conn.execute(
                _INVOICE_SELECT + " WHERE i.id = ? AND i.tenant_id = ?",
                (invoice_id, self.tenant_id),
            ).fetchone()
            if row is None:
                return None
            lines = conn.execute(
                "SELECT sku, description, quantity, unit_price_cents, cost_cents"
                " FROM invoice_lines WHERE invoice_id = ? ORDER BY id",
                (invoice_id,),
            )
            return {**dict(row), "lines": [dict(line) for line in lines]}

    def record_reminder(self, invoice_id: str, proceed: Callable[[], bool] = _always) -> Outcome:
        """Records that a reminder was sent, once per unpaid invoice (see ``_change``)."""
        return self._change(
            invoice_id, "INSERT OR IGNORE INTO reminders VALUES (?, datetime('now'))", proceed
        )

    def reminded(self, invoice_id: str) -> bool:
        """Whether a reminder was recorded for the invoice (one of this tenant's)."""
        with self._connect() as conn:
            sql = (
                "SELECT 1 FROM reminders AS r JOIN invoices AS i ON i.id = r.invoice_id"
                " WHERE r.invoice_id = ? AND i.tenant_id = ?"
            )
            return conn.execute(sql, (invoice_id, self.tenant_id)).fetchone() is not None

    def mark_paid(self, invoice_id: str, proceed: Callable[[], bool] = _always) -> Outcome:
        """Marks an unpaid invoice paid (see ``_change``)."""
        return self._change(invoice_id, "UPDATE invoices SET status = 'paid' WHERE id = ?", proceed)

    def _change(self, invoice_id: str, statement: str, proceed: Callable[[], bool]) -> Outcome:
        """Runs ``statement`` on an unpaid invoice in one transaction.

        IMMEDIATE takes the write lock first, so the status read and the change that
        depends on it see the same invoice. ``proceed`` is asked last, before committing:
        ``False`` (the call was cancelled, say) rolls the change back.

        Returns:
            ``"done"``, ``"unknown"`` (no such invoice), ``"paid"`` (already paid: nothing
            to change) or ``"abandoned"`` (``proceed`` said no).
        """
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT status FROM invoices WHERE id = ? AND tenant_id = ?",
                    (invoice_id, self.tenant_id),
                ).fetchone()
                outcome: Outcome
                if row is None:
                    outcome = "unknown"
                elif row[0] == "paid":
                    outcome = "paid"
                else:
                    conn.execute(statement, (invoice_id,))
                    outcome = "done" if proceed() else "abandoned"
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT" if outcome == "done" else "ROLLBACK")
            return outcome

    def list_customers(self, country: str | None = None) -> list[dict[str, Any]]:
        """Customers in id order, optionally from one country (ISO 3166 alpha-2)."""
        sql, args = "SELECT * FROM customers WHERE tenant_id = ?", [self.tenant_id]
        if country is not None:
            sql, args = sql + " AND country = ?", [*args, country.upper()]
        with self._connect() as conn:
            return [dict(row) for row in conn.execute(sql + " ORDER BY id", args)]

    def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        """One customer, or ``None``."""
        with self._connect() as conn:
            sql = "SELECT * FROM customers WHERE id = ? AND tenant_id = ?"
            row = conn.execute(sql, (customer_id, self.tenant_id)).fetchone()
            return None if row is None else dict(row)

    def revenue(self, year: int) -> dict[str, Any]:
        """Paid and still-unpaid (pending or overdue) amounts per month of issue in ``year``."""
        months = {f"{year:04d}-{m:02d}": [0, 0] for m in range(1, 13)}
        sql = (
            "SELECT substr(issued_at, 1, 7), status = 'paid', sum(amount_cents) FROM invoices"
            " WHERE tenant_id = ? AND substr(issued_at, 1, 4) = ? AND currency = ? GROUP BY 1, 2"
        )
        with self._connect() as conn:
            rows = conn.execute(sql, (self.tenant_id, f"{year:04d}", seed.CURRENCY))
            for month, paid, cents in rows:
                months[month][0 if paid else 1] += cents
        return {
            "year": year,
            "currency": seed.CURRENCY,
            "months": [
                {"month": month, "paid_cents": paid, "pending_cents": pending}
                for month, (paid, pending) in months.items()
            ],
        }


def _seed(conn: sqlite3.Connection) -> None:
    data = seed.generate()
    # One statement at a time: executescript() would COMMIT the transaction holding the lock.
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('seed', ?)", (seed.SEED_VERSION,))
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)", data.customers)
    conn.executemany("INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", data.invoices)
    conn.executemany(
        "INSERT INTO invoice_lines (invoice_id, sku, description, quantity, unit_price_cents,"
        " cost_cents) VALUES (?, ?, ?, ?, ?, ?)",
        data.lines,
    )
