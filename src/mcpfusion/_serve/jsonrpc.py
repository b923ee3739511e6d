"""JSON-RPC 2.0 on a line transport: reading a line, naming what is wrong, answering it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

import pydantic_core
from mcp import types
from pydantic import ValidationError

__all__ = [
    "BATCH_VERSIONS",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Refusal",
    "RequestId",
    "encode",
    "error",
    "explain",
    "recover_id",
    "repeated_key",
    "usable_id",
    "validated",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600

BATCH_VERSIONS: Final = frozenset({"2025-03-26"})
"""The protocol versions that allow JSON-RPC batches (2025-06-18 removed them)."""

RequestId = int | str
"""An id MCP accepts on a request: a string or an integer, never a bool."""

_MAX_ID_DIGITS: Final = 4000
"""Python refuses to convert an integer of more than 4,300 digits from text."""

# Lexical pieces of JSON, matched on bytes. Strings unrolled (no alternation per
# character) so a megabyte string is one quick match.
_WS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"')
_SCALAR = re.compile(
    rb'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"'
    rb"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null"
)
_INTEGER = re.compile(rb"-?(?:0|[1-9][0-9]*)")
_NESTED = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"|[\[\]{}]')
_SURROGATES = re.compile("[\ud800-\udfff]")


def usable_id(value: object) -> RequestId | None:
    """``value`` if it can identify a request (a string or an integer), else ``None``."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _id_of(token: bytes) -> RequestId | None:
    if token.startswith(b'"'):
        try:
            value = pydantic_core.from_json(token)
        except ValueError:  # a lone surrogate escape or bad UTF-8: no usable id
            return None
        return value if isinstance(value, str) else None
    if _INTEGER.fullmatch(token) and len(token) <= _MAX_ID_DIGITS:
        return int(token)
    return None  # a fraction, a bool, null, or too many digits


def _after_ws(line: bytes, pos: int) -> int:
    found = _WS.match(line, pos)
    return found.end() if found else pos


def _skip_container(line: bytes, pos: int) -> int:
    """The end of the array or object opening at ``pos``, or -1 if the line ends first."""
    depth = 0
    for found in _NESTED.finditer(line, pos):
        mark = found.group()
        if mark in (b"[", b"{"):
            depth += 1
        elif mark in (b"]", b"}"):
            depth -= 1
            if depth == 0:
                return found.end()
    return -1


def recover_id(line: bytes) -> RequestId | None:
    """The top-level ``"id"`` of a line that did not parse, read from its well-formed start.

    The line is read as far as it is a well-formed JSON object (nested values are skipped
    by counting brackets, so a 10,000-deep array or a 5,000-digit number in the params
    does not stop it); the last ``"id"`` member found by then wins, as in a JSON parser.
    An id that is not a string or an integer is no id.
    """
    pos = _after_ws(line, 0)
    if not line.startswith(b"{", pos):
        return None
    pos += 1
    found: RequestId | None = None
    while True:
        pos = _after_ws(line, pos)
        key = _STRING.match(line, pos)
        if key is None:
            return found
        pos = _after_ws(line, key.end())
        if not line.startswith(b":", pos):
            return found
        pos = _after_ws(line, pos + 1)
        scalar = _SCALAR.match(line, pos)
        if scalar is not None:
            if key.group() == b'"id"':
                found = _id_of(scalar.group())
            pos = scalar.end()
        elif line.startswith((b"{", b"["), pos):
            if key.group() == b'"id"':
                found = None
            pos = _skip_container(line, pos)
            if pos < 0:
                return found
        else:
            return found
        pos = _after_ws(line, pos)
        if not line.startswith(b",", pos):
            return found
        pos += 1


def explain(message: Any) -> str:
    """Why ``message`` is not a JSON-RPC message, in words that never quote it."""
    if not isinstance(message, Mapping):
        return "a message must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "method must be a string"
        if not isinstance(message.get("params"), Mapping | None):
            return "params must be an object"
        if "id" in message and usable_id(message["id"]) is None:
            return "id must be a string or an integer"
        return "not a valid request or notification"
    if "result" in message or "error" in message:
        if "result" in message and not isinstance(message["result"], Mapping):
            return "result must be an object"
        if "error" in message:
            return "error must be an object with an integer code and a message"
        return "a response needs the string or integer id of its request"
    return "a request needs a method"


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _distinct(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Repeated(key)
        obj[key] = value
    return obj


_UNPARSED: Final = object()


def _no_repeats(raw: bytes | str, parsed: Any) -> bool:
    """Whether the text of ``parsed`` surely repeats no key: it holds as many object members
    (each one ``:`` outside the strings) as ``parsed``'s objects hold keys."""
    keys = _keys(parsed)
    text = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
    # Every ":" is at least as many as the members; most messages have no other.
    return text.count(b":") == keys or _STRING.sub(b"", text).count(b":") == keys


def _keys(value: Any) -> int:
    """How many keys the objects in a parsed JSON value hold, together (-1 if too deep)."""
    try:
        return _count(value)
    except RecursionError:
        return -1


def _count(value: Any) -> int:
    if type(value) is dict:
        return len(value) + sum(
            _count(item) for item in value.values() if type(item) in _CONTAINERS
        )
    if type(value) is list:
        return sum(_count(item) for item in value if type(item) in _CONTAINERS)
    return 0


_CONTAINERS: Final = (dict, list)


def repeated_key(raw: bytes | str, parsed: Any = _UNPARSED) -> str | None:
    """The first key some object of a JSON text repeats, else ``None``.

    JSON parsers keep the last of two equal keys, so ``{"action": "get", "action":
    "delete"}`` would mean what the last one says while a reader of the first sees
    another request: such a message is refused instead. Call it on text that parsed.

    Given what the text parsed to, a message that repeats no key is known without parsing
    it again: each member of an object is one ``:`` outside the strings, so a text with
    as many as its objects have keys repeats none (the stdlib parse that names the key
    runs only when one is repeated, or the count cannot tell).
    """
    if parsed is not _UNPARSED and _no_repeats(raw, parsed):
        return None
    try:
        json.loads(raw, object_pairs_hook=_distinct)
    except _Repeated as repeated:
        return repeated.key
    except (ValueError, RecursionError):  # what the strict parse took, this one may not
        return None
    return None


Refusal = tuple[RequestId | None, str]
"""Why a message is refused (an invalid request), and the id to answer it with."""


def validated(message: Any) -> types.JSONRPCMessage | Refusal:
    """``message`` as the SDK's JSON-RPC message, or why it is not one.

    A request whose id is not a string or an integer (``null``, an object) is refused
    here: the SDK would read it as a notification and never answer it.
    """
    if isinstance(message, Mapping):
        if "method" in message and "id" in message and usable_id(message["id"]) is None:
            return None, "id must be a string or an integer"
        try:
            return types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        except ValidationError:
            return usable_id(message.get("id")), explain(message)
    return None, explain(message)


def error(request_id: RequestId | None, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response, keys in the order the SDK writes them."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def encode(message: Any) -> bytes:
    """``message`` as one line of JSON text, without the newline.

    NaN and infinities become ``null``, as pydantic models write them. A lone surrogate
    (which UTF-8 cannot encode) becomes U+FFFD instead of failing the write, as the wire
    format's text paths do.
    """
    try:
        return pydantic_core.to_json(message, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        plain = pydantic_core.to_jsonable_python(message, inf_nan_mode="null")
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
        return _SURROGATES.sub("\ufffd", text).encode()
