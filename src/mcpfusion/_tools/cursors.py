"""Page cursors: sealed with the app's secret, bound to the caller and the query, expiring."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity
from mcpfusion._present.failures import invalid_cursor
from mcpfusion._present.paging import Pager
from mcpfusion._present.response import ToolResponse
from mcpfusion._tools.action import Action

MIN_SECRET_BYTES: Final = 32
"""The shortest ``cursor_secret`` accepted: as strong as the key it is stretched into."""
DEFAULT_TTL: Final = 3600.0
"""How long a cursor is valid by default, in seconds."""
MAX_CURSOR_CHARS: Final = 512
"""A longer ``_cursor`` was not made here: it is refused before any decoding."""

_VERSION: Final = 1
# Version, offset, then the digests of the caller and of the query. 8 bytes each: they
# travel encrypted, so nobody can aim at another caller's digest, and a collision found
# blind takes 2**64 tries; the cursor stays 120 characters (a 16-byte digest makes 140,
# which the model reads twice per page).
_LAYOUT: Final = struct.Struct(">BQ8s8s")
_DIGEST_BYTES: Final = 8
_KDF_INFO: Final = b"mcpfusion page cursor v1"


class CursorRefused(Exception):
    """A ``_cursor`` this call cannot use; ``message`` and ``recovery`` are for the model."""

    def __init__(self, message: str, recovery: str) -> None:
        super().__init__(message)
        self.message = message
        self.recovery = recovery


_START_OVER: Final = (
    "Call again without _cursor to get the first page, then pass each next-page cursor "
    "exactly as the answer gives it."
)


class Cursors:
    """Seals and opens page cursors for one app (Fernet: AES-CBC with an HMAC-SHA256 tag).

    A cursor holds the offset of the next page and digests of who asked (subject and
    tenant) and what (tool, action and the other arguments); it carries its issue time,
    which bounds its life. Nothing in it is readable or changeable without the secret.

    Args:
        owner: whose option this is, for error messages (``app 'billing'``).
        secret: at least 32 bytes (a ``str`` is encoded as UTF-8); ``None`` draws a random
            one, valid in this process only.
        ttl: how many seconds a cursor stays valid.
        clock: the current time in seconds (the system clock; tests pass their own).

    Raises:
        DefinitionError: on a short secret or a ttl that is not a positive number.
    """

    __slots__ = ("_clock", "_fernet", "random_secret", "ttl")

    def __init__(
        self,
        owner: str,
        secret: str | bytes | None = None,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < 1e9:
            raise DefinitionError(f"{owner}: cursor_ttl is a positive number of seconds")
        if secret is None:
            key = secrets.token_bytes(MIN_SECRET_BYTES)
        elif isinstance(secret, str | bytes):
            key = secret.encode() if isinstance(secret, str) else bytes(secret)
            if len(key) < MIN_SECRET_BYTES:
                raise DefinitionError(
                    f"{owner}: cursor_secret needs at least {MIN_SECRET_BYTES} bytes (make "
                    "one with secrets.token_hex(32))"
                )
        else:
            raise DefinitionError(f"{owner}: cursor_secret is a str, bytes or None")
        derived = HKDF(hashes.SHA256(), length=32, salt=None, info=_KDF_INFO).derive(key)
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))
        self._clock = clock
        self.ttl = float(ttl)
        self.random_secret = secret is None
        """Whether the secret was drawn in this process (cursors die with it)."""

    def page(
        self,
        action: Action,
        arguments: Mapping[str, Any],
        identity: Identity | None,
        cursor: str | None,
    ) -> tuple[Pager | None, ToolResponse | None]:
        """The page a call of a paging action asks for, or the ``INVALID_CURSOR`` refusal.

        Args:
            action: the paging action called.
            arguments: its other arguments as sent (without ``_cursor`` and ``_select``).
            identity: the caller.
            cursor: the ``_cursor`` sent, ``None`` for the first page.
        """
        presenter = action.presenter
        limit = presenter.limit if presenter is not None and presenter.limit else 0
        caller = caller_digest(identity)
        query = query_digest(action.tool, action.name, arguments)
        offset = 0
        if cursor is not None:
            try:
                offset = self.open(cursor, caller, query)
            except CursorRefused as no:
                return None, invalid_cursor(action.tool, action.name, no.message, no.recovery)
        seal = functools.partial(self.seal, caller=caller, query=query)
        return Pager(offset, limit, action.state_name, seal), None

    def seal(self, offset: int, caller: bytes, query: bytes) -> str:
        """The cursor of the page starting at ``offset`` for this caller and query."""
        plain = _LAYOUT.pack(_VERSION, offset, caller, query)
        return self._fernet.encrypt_at_time(plain, int(self._clock())).decode("ascii")

    def open(self, cursor: str, caller: bytes, query: bytes) -> int:
        """The offset a cursor holds, when this caller may use it for this query.

        Raises:
            CursorRefused: if it was changed or not made with this secret, has expired,
                was issued to another caller, or for other arguments.
        """
        try:
            if len(cursor) > MAX_CURSOR_CHARS:
                raise InvalidToken
            token = cursor.encode("ascii")
            issued = self._fernet.extract_timestamp(token)  # checks the tag first
            plain = self._fernet.decrypt(token)
            version, offset, owner, asked = _LAYOUT.unpack(plain)
            if version != _VERSION:
                raise InvalidToken
        except (InvalidToken, UnicodeEncodeError, struct.error):
            raise CursorRefused(
                "This cursor was not issued by this server for this list: it was changed, "
                "cut short, or made by another server.",
                _START_OVER,
            ) from None
        if self._clock() - issued > self.ttl:
            raise CursorRefused(
                f"This cursor has expired (a cursor is valid for {self.ttl:g} seconds).",
                _START_OVER,
            )
        if owner != caller:
            raise CursorRefused("This cursor was issued to another caller.", _START_OVER)
        if asked != query:
            raise CursorRefused(
                "This cursor belongs to a call with other arguments.",
                "Send it with exactly the arguments of the call that returned it (only "
                "_select may change), or call again without _cursor to start over.",
            )
        return int(offset)


def caller_digest(identity: Identity | None) -> bytes:
    """What binds a cursor to its caller: the identity's subject and tenant."""
    who = None if identity is None else [identity.subject, identity.tenant]
    return _digest(who)


def query_digest(tool: str, action: str, arguments: Mapping[str, Any]) -> bytes:
    """What binds a cursor to its query: the action and its other arguments as sent."""
    return _digest([tool, action, arguments])


def _digest(value: Any) -> bytes:
    # Canonical JSON: the same arguments in another key order are the same query.
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # keys of mixed types, from an in-process caller
        text = repr(value)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:_DIGEST_BYTES]
