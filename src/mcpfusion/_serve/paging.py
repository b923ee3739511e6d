"""Pages of the four list methods, with opaque cursors bound to the list they page."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from mcp import types
from mcp.shared.exceptions import MCPError

__all__ = ["INVALID_CURSOR", "STALE_CURSOR", "page", "page_size_of", "version_of"]

T = TypeVar("T")

INVALID_CURSOR: Final = "Invalid cursor: send the nextCursor of the previous page, or none"
STALE_CURSOR: Final = "Stale cursor: the list changed since that page; list again without a cursor"

_FORM: Final = re.compile(r"([1-9][0-9]{0,8})\.([0-9a-f]{12})")
"""What a cursor decodes to: the offset of its page, a dot, the version of the list."""
_MAX_CURSOR: Final = 64
"""No cursor this module makes is longer; a longer one is refused before decoding."""


def page_size_of(app: object) -> int | None:
    """How many entries a page of the app's lists holds (``Fusion(page_size=...)``);
    ``None``, one page holding them all, for an app that does not say."""
    size = getattr(app, "page_size", None)
    return size if type(size) is int and size > 0 else None


def version_of(keys: Sequence[str]) -> str:
    """The version of a list: a digest of what it lists, in order (12 hex digits).

    A digest, not a counter: every worker serving the same catalog to the same caller
    computes the same one, so a cursor made by one worker pages on another, and one made
    before the list changed (a tool enabled, a caller's scopes shown another list) no
    longer matches.
    """
    digest = hashlib.blake2b(digest_size=6)
    for key in keys:
        digest.update(key.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def _encode(offset: int, version: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}.{version}".encode()).decode().rstrip("=")


def _offset(cursor: str, version: str, total: int) -> int:
    """Where the page ``cursor`` names starts.

    Raises:
        MCPError: -32602 for a cursor this server did not make for this list, or past
            its end, or made before the list changed.
    """
    if not isinstance(cursor, str) or len(cursor) > _MAX_CURSOR or not cursor.isascii():
        raise MCPError(types.INVALID_PARAMS, INVALID_CURSOR)
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise MCPError(types.INVALID_PARAMS, INVALID_CURSOR) from None
    found = _FORM.fullmatch(text)
    if found is None or _encode(int(found[1]), found[2]) != cursor:
        raise MCPError(types.INVALID_PARAMS, INVALID_CURSOR)
    if found[2] != version:
        raise MCPError(types.INVALID_PARAMS, STALE_CURSOR)
    offset = int(found[1])
    if offset >= total:  # a page past the end was never announced
        raise MCPError(types.INVALID_PARAMS, INVALID_CURSOR)
    return offset


def page(
    items: Sequence[T], key: Callable[[T], str], cursor: str | None, size: int | None
) -> tuple[Sequence[T], str | None]:
    """The page of ``items`` that ``cursor`` names (the first without one), and the
    ``nextCursor`` of the page after it (``None`` on the last page).

    Without a page ``size`` every item is on the one page, and any cursor is refused: this
    server never made one. ``key`` names an item (a tool's or prompt's name, a resource's
    URI) for the list's version.

    Raises:
        MCPError: -32602 for a cursor that names no page of this list (SPEC §18).
    """
    if size is None:
        if cursor is not None:
            raise MCPError(types.INVALID_PARAMS, INVALID_CURSOR)
        return items, None
    version = version_of([key(item) for item in items])
    start = 0 if cursor is None else _offset(cursor, version, len(items))
    end = start + size
    return items[start:end], (_encode(end, version) if end < len(items) else None)
