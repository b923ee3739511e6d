"""The data block (SPEC §3): indented JSON, compact JSON or TOON, tag-neutralized."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import pydantic_core
import toon_format

from mcpfusion._errors import SerializationError
from mcpfusion._wire.format import neutralize, neutralize_json
from mcpfusion._wire.repair import repaired
from mcpfusion._wire.toon import NotPlain
from mcpfusion._wire.toon import encode as encode_toon

DataFormat = Literal["json", "compact", "toon"]
DATA_FORMATS: tuple[DataFormat, ...] = ("json", "compact", "toon")

Delimiter = Literal["|", ",", "\t"]
DELIMITERS: tuple[Delimiter, ...] = ("|", ",", "\t")
"""The delimiters a TOON data block may use (``|`` by default)."""

EMPTY_TEXT = "OK"
"""What the data block says for ``None`` and ``""``."""

CHUNK_ROWS = 2_000
"""Items serialized per call in a long list. Each pydantic-core call holds the GIL: 100k
rows in one call hold it for about 60 ms, so a presentation running in a worker thread
would stall the event loop that long; in chunks of 2,000 it yields every millisecond or so,
for no measurable cost."""


def to_json(value: Any, *, indent: int | None = 2) -> str:
    """Serializes ``value`` in the layout of ``JSON.stringify(value, null, 2)``.

    Pydantic-core's serializer does the work: raw UTF-8, ``NaN``/``Infinity`` as ``null``,
    models, dataclasses, datetimes, decimals, UUIDs, enums and sets as pydantic's JSON mode.

    Raises:
        SerializationError: if the value holds something that cannot be serialized.
    """
    if isinstance(value, list) and len(value) > CHUNK_ROWS:
        raw = _joined(value, indent)
    else:
        raw = _raw(value, indent)
    text = raw.decode()
    # memchr-fast test: most payloads hold no "<" and skip the regex entirely.
    return neutralize_json(text) if b"<" in raw else text


def _raw(value: Any, indent: int | None) -> bytes:
    """pydantic-core's JSON of ``value``, retried without ``MISSING`` and lone surrogates.

    Raises:
        SerializationError: if the value still cannot be serialized.
    """
    try:
        return pydantic_core.to_json(value, indent=indent, inf_nan_mode="null")
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
        return pydantic_core.to_json(_repaired(value, exc), indent=indent)


def _repaired(value: Any, exc: Exception) -> Any:
    """``value`` without ``MISSING`` entries and lone surrogates (``_repair``), once it failed.

    Raises:
        SerializationError: if the repair cannot help; ``exc`` says best what is wrong.
    """
    fixed = repaired(value)
    if fixed is value:
        raise SerializationError(f"the data cannot be serialized: {exc}") from exc
    return fixed


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in its dicts and lists, keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list | tuple):
        return [_map_strings(item, fn) for item in value]
    if isinstance(value, dict):
        return {
            fn(key) if isinstance(key, str) else key: _map_strings(item, fn)
            for key, item in value.items()
        }
    return value


def _joined(rows: list[Any], indent: int | None) -> bytes:
    """A long list serialized ``CHUNK_ROWS`` items at a time, joined as one would be."""
    # A chunk's text is "[\n<items>\n]" indented ("[<items>]" compact), its items already
    # at the list's depth: stripping the brackets and joining gives the whole list's text.
    # The chunks stay bytes, cut through memoryviews, so the text is copied once (by the
    # join) before the one decode: 0.56 -> 0.54 us per row at 100k rows.
    cut, separator = (2, b",\n") if indent else (1, b",")
    pieces: list[bytes | memoryview] = [b"[\n" if indent else b"["]
    for start in range(0, len(rows), CHUNK_ROWS):
        if start:
            pieces.append(separator)
        pieces.append(memoryview(_raw(rows[start : start + CHUNK_ROWS], indent))[cut:-cut])
    pieces.append(b"\n]" if indent else b"]")
    return b"".join(pieces)


def neutralize_strings(value: Any) -> Any:
    """A plain JSON value with every string in it, keys included, neutralized (SPEC §7).

    For structured content (SPEC §12), which clients receive as a value (an escape in the
    text would not survive re-serialization, so the string itself carries ``&lt;``), and
    for TOON (SPEC §10), which decodes to the neutralized strings. Lone surrogates become
    U+FFFD, as in every text block.
    """
    return _map_strings(value, neutralize)


def to_jsonable(value: Any) -> Any:
    """Converts ``value`` to plain JSON-compatible Python, as pydantic's JSON mode does."""
    try:
        return pydantic_core.to_jsonable_python(value, inf_nan_mode="null")
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
        return _repaired(value, exc)


def to_toon(value: Any, delimiter: Delimiter = "|") -> str:
    """Encodes ``value`` as TOON (``|`` delimiter by default), tag-neutralized (SPEC §10).

    Each string is neutralized before encoding (TOON escapes a tab or a line break inside
    a quoted string, which would hide it from a pass over the text) and the text after
    (an unquoted ``<`` ending one value may meet the next key across a line break). Lone
    surrogates, which the encoder refuses, become U+FFFD on the way.
    """
    plain = to_jsonable(value)
    try:
        try:
            # The fast renderer neutralizes the strings as it goes; toon_format takes the rest.
            text = encode_toon(plain, delimiter, neutralize)
        except NotPlain:
            text = toon_format.encode(neutralize_strings(plain), delimiter=delimiter)
    except (TypeError, ValueError) as exc:
        raise SerializationError(f"the data cannot be encoded as TOON: {exc}") from exc
    return neutralize(text)


def render_data(
    value: Any,
    data_format: DataFormat = "json",
    delimiter: Delimiter = "|",
    *,
    str_as_data: bool = False,
) -> str:
    """Renders the text of a data block: a str verbatim, ``None``/``""`` as ``OK``.

    With ``str_as_data`` a non-empty str in TOON is encoded like any value (``"123"``
    quoted), so the text decodes to the string (SPEC §10), not to a number.
    """
    if isinstance(value, str) and not (str_as_data and value and data_format == "toon"):
        return neutralize(value) if value else EMPTY_TEXT
    if value is None:
        return EMPTY_TEXT
    if data_format == "toon":
        # TOON writes an empty object as nothing; a block is never blank.
        return to_toon(value, delimiter) or EMPTY_TEXT
    return to_json(value, indent=2 if data_format == "json" else None)


def select_fields(data: Any, order: Iterable[str], select: Iterable[str] | None) -> Any:
    """Keeps only the selected top-level keys, in ``order`` (SPEC §11); per item for a list.

    ``None`` or an empty selection keeps everything.

    Raises:
        TypeError: if ``select`` is a str (it would select its characters).
    """
    if isinstance(select, str):
        raise TypeError("select takes a list of keys, not a str")
    if not select or data is None:
        return data
    wanted = set(select)
    keys = [key for key in order if key in wanted]
    if isinstance(data, list):
        return [{k: row[k] for k in keys if k in row} for row in data]
    return {k: data[k] for k in keys if k in data}
