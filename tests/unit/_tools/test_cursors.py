"""Page cursors: sealed, bound to the caller and the query, expiring (SPEC §5.4)."""

from __future__ import annotations

import pytest

from mcpfusion import DefinitionError, Identity
from mcpfusion._tools.cursors import (
    MAX_CURSOR_CHARS,
    CursorRefused,
    Cursors,
    caller_digest,
    query_digest,
)

SECRET = "s" * 32
ALICE = caller_digest(Identity("alice", tenant="northwind"))
QUERY = query_digest("billing", "list_invoices", {"status": "open"})


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_sealed_cursor_opens_to_its_offset() -> None:
    """A cursor opened by the same caller for the same query gives back its offset."""
    cursors = Cursors("app 't'", SECRET)
    assert cursors.open(cursors.seal(40, ALICE, QUERY), ALICE, QUERY) == 40


def test_a_cursor_reveals_nothing_of_its_content() -> None:
    """The offset and the digests are encrypted: two cursors of one page differ."""
    cursors = Cursors("app 't'", SECRET)
    first, second = cursors.seal(40, ALICE, QUERY), cursors.seal(40, ALICE, QUERY)
    assert first != second
    assert "40" not in first


def test_a_changed_cursor_is_refused() -> None:
    """Flipping one character of a cursor makes it one this server never issued."""
    cursors = Cursors("app 't'", SECRET)
    cursor = cursors.seal(40, ALICE, QUERY)
    changed = cursor[:-6] + ("A" if cursor[-6] != "A" else "B") + cursor[-5:]
    with pytest.raises(CursorRefused, match="not issued by this server"):
        cursors.open(changed, ALICE, QUERY)


@pytest.mark.parametrize("cursor", ["", "not a cursor", "é" * 10, "x" * (MAX_CURSOR_CHARS + 1)])
def test_garbage_is_refused(cursor: str) -> None:
    """Empty, malformed, non-ASCII or oversized text is refused as not issued here."""
    with pytest.raises(CursorRefused, match="not issued by this server"):
        Cursors("app 't'", SECRET).open(cursor, ALICE, QUERY)


def test_another_secret_refuses_the_cursor() -> None:
    """A cursor sealed by another app's (or process's) secret is refused."""
    cursor = Cursors("app 't'", SECRET).seal(40, ALICE, QUERY)
    with pytest.raises(CursorRefused, match="made by another server"):
        Cursors("app 't'", "t" * 32).open(cursor, ALICE, QUERY)


def test_an_expired_cursor_is_refused() -> None:
    """A cursor older than the ttl is refused as expired, one valid until then."""
    clock = Clock()
    cursors = Cursors("app 't'", SECRET, ttl=60, clock=clock)
    cursor = cursors.seal(40, ALICE, QUERY)
    clock.now += 60
    assert cursors.open(cursor, ALICE, QUERY) == 40
    clock.now += 1
    with pytest.raises(CursorRefused, match=r"expired \(a cursor is valid for 60 seconds"):
        cursors.open(cursor, ALICE, QUERY)


def test_another_caller_is_refused() -> None:
    """A cursor issued to one caller is refused to another subject or another tenant."""
    cursors = Cursors("app 't'", SECRET)
    cursor = cursors.seal(40, ALICE, QUERY)
    for other in (
        Identity("bob", tenant="northwind"),
        Identity("alice", tenant="globex"),
        None,
    ):
        with pytest.raises(CursorRefused, match="issued to another caller"):
            cursors.open(cursor, caller_digest(other), QUERY)


def test_another_query_is_refused() -> None:
    """A cursor is refused for other arguments, another action or another tool."""
    cursors = Cursors("app 't'", SECRET)
    cursor = cursors.seal(40, ALICE, QUERY)
    for other in (
        query_digest("billing", "list_invoices", {"status": "paid"}),
        query_digest("billing", "list_invoices", {}),
        query_digest("billing", "list_customers", {"status": "open"}),
        query_digest("crm", "list_invoices", {"status": "open"}),
    ):
        with pytest.raises(CursorRefused, match="call with other arguments"):
            cursors.open(cursor, ALICE, other)


def test_argument_order_is_the_same_query() -> None:
    """The same arguments sent in another key order are the same query."""
    assert query_digest("t", "a", {"x": 1, "y": [1, 2]}) == query_digest(
        "t", "a", {"y": [1, 2], "x": 1}
    )


def test_keys_of_mixed_types_still_have_a_digest() -> None:
    """Arguments JSON cannot sort (an in-process caller's) still bind the cursor."""
    assert len(query_digest("t", "a", {"x": {1: "a", "b": 2}})) == 8


def test_a_random_secret_is_drawn_when_none_is_given() -> None:
    """Without a secret each app draws its own: one app's cursors are refused by another."""
    first, second = Cursors("app 't'"), Cursors("app 't'")
    assert first.random_secret
    with pytest.raises(CursorRefused, match="not issued by this server"):
        second.open(first.seal(1, ALICE, QUERY), ALICE, QUERY)


@pytest.mark.parametrize("secret", ["short", b"x" * 31])
def test_a_short_secret_is_a_definition_error(secret: str | bytes) -> None:
    """A secret under 32 bytes fails where the app is defined."""
    with pytest.raises(DefinitionError, match="cursor_secret needs at least 32 bytes"):
        Cursors("app 't'", secret)


def test_a_secret_of_another_type_is_a_definition_error() -> None:
    """A secret that is neither text nor bytes fails where the app is defined."""
    with pytest.raises(DefinitionError, match="cursor_secret is a str, bytes or None"):
        Cursors("app 't'", 12345)  # type: ignore[arg-type]


@pytest.mark.parametrize("ttl", [0, -1, True, "60", float("nan")])
def test_a_bad_ttl_is_a_definition_error(ttl: object) -> None:
    """A ttl that is not a positive number of seconds fails where the app is defined."""
    with pytest.raises(DefinitionError, match="cursor_ttl is a positive number"):
        Cursors("app 't'", SECRET, ttl=ttl)  # type: ignore[arg-type]


def test_a_cursor_is_short_and_url_safe() -> None:
    """A cursor is 120 URL-safe characters: cheap for the model to read and send back."""
    cursor = Cursors("app 't'", SECRET).seal(10**9, ALICE, QUERY)
    assert len(cursor) == 120
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")
