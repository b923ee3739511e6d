"""TOON text of a plain JSON value, byte for byte what ``toon_format.encode`` writes, faster.

``toon_format`` (the reference encoder, pure Python) first copies the value into its data
model, checking every string, float and key, then renders it with three regular
expressions per string. A data block's value is already that model (``to_jsonable`` made
it): this renderer takes it as it is, applies the block's text rule to the strings that
need it on the way (instead of copying the value to neutralize it first) and tests each
string once. It follows ``toon_format`` 1.2's rules (TOON §7-§10) one for one and refuses
(``NotPlain``) what lies outside the plain model, for the caller to hand to
``toon_format``; ``tests/unit/_wire/test_toon.py`` pins the two to the same bytes on
generated values (hypothesis).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

__all__ = ["NotPlain", "encode"]

_UNQUOTED_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NUMERIC_LIKE: Final = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NEEDS_ESCAPE: Final = re.compile(r'[\\"\x00-\x1f]')
_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# One search per string for what forces quotes anywhere in it: TOON's structural characters
# and the document's delimiter (a tab is a control character already).
_QUOTED_IF_IN: Final = {
    delimiter: re.compile(r'[:"\\\[\]{}\x00-\x1f' + re.escape(delimiter) + "]")
    for delimiter in (",", "|", "\t")
}
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_KEYWORDS: Final = frozenset({"true", "false", "null"})
_NUMBER_START: Final = frozenset("+0123456789")
_CANONICAL_MIN: Final = Decimal("1e-6")
_CANONICAL_MAX: Final = Decimal("1e21")
_MAX_CACHED: Final = 4096
"""Encoded keys, and short strings, kept: keys repeat in every row, and so do a column's
values (a status, a currency). A cache is emptied when full, so hostile data with endless
distinct strings costs no memory beyond it."""
_MAX_CACHED_LENGTH: Final = 64

# Only ASCII text without "<" is cached: the text rule leaves it as it is, so what it
# encodes to holds whatever the rule.
_keys: dict[str, str] = {}
_strings: Final[dict[str, dict[str, str]]] = {delimiter: {} for delimiter in _QUOTED_IF_IN}


class NotPlain(Exception):
    """The value is not for this renderer: ``toon_format`` is to encode it.

    Anything outside the plain JSON model (a tuple, a Decimal, a date, a non-str key, a
    non-finite float, a lone surrogate, a cycle or too deep a value), or a key that the
    text rule changes (two keys could then become one).
    """


NotPlain = NotPlain


def encode(value: Any, delimiter: str = "|", text: Callable[[str], str] | None = None) -> str:
    """The TOON document of ``value`` (indent 2), exactly as ``toon_format.encode`` writes it.

    Args:
        value: a plain JSON value: dicts with str keys, lists, str, int, float, bool, None.
        delimiter: ``|``, ``,`` or a tab.
        text: a rule for every string, keys included, as if ``value`` had been copied with
            it applied first. Only strings that are not ASCII or hold a ``<`` are passed to
            it: the rule must leave the others as they are (as ``neutralize`` does).

    Raises:
        NotPlain: ``toon_format`` is to encode the value (after ``text``, if given).
    """
    try:
        renderer = _Renderer(delimiter, text)
        renderer.root(value)
    except RecursionError:
        raise NotPlain("nested too deeply, or a cycle") from None
    return "\n".join(renderer.lines)


def _plain(text: str) -> None:
    """Refuses a lone surrogate, for ``toon_format`` to reject (an ASCII text has none)."""
    if not text.isascii() and _SURROGATE.search(text):
        raise NotPlain("a lone surrogate")


def _quote(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _key(key: Any, text: Callable[[str], str] | None) -> str:
    """An object key or field name, quoted unless it is a plain identifier (§7.3)."""
    if type(key) is not str:
        raise NotPlain("a key that is not a str")
    found = key if _UNQUOTED_KEY.fullmatch(key) else None
    if key.isascii() and "<" not in key:
        found = found or _quote(key)
        _cache(_keys, key, found)
        return found
    if text is not None and text(key) != key:
        raise NotPlain("a key the text rule rewrites")
    _plain(key)
    return found or _quote(key)


def _cache(cache: dict[str, str], text: str, encoded: str) -> None:
    if len(cache) >= _MAX_CACHED:
        cache.clear()
    cache[text] = encoded


def _float(value: float) -> str:
    """A finite float in TOON's canonical number form (§2); a non-finite one is not plain."""
    if value != value or value in (float("inf"), float("-inf")):
        raise NotPlain(
            "a non-finite float"
        )  # toon_format writes null: its normalization, not this renderer's
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    number = Decimal(repr(value))
    magnitude = abs(number)
    if _CANONICAL_MIN <= magnitude < _CANONICAL_MAX:
        text = f"{number:f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - 1
    if len(mantissa) > 1:
        mantissa = f"{mantissa[0]}.{mantissa[1:]}"
    exponent_sign = "+" if exponent >= 0 else "-"
    return f"{'-' if sign else ''}{mantissa}e{exponent_sign}{abs(exponent)}"


Shape = tuple[tuple[str, "Shape | None"], ...]


def _is_primitive(value: Any) -> bool:
    return type(value) is not dict and type(value) is not list


def _shape(objects: list[Any]) -> Shape | None:
    """The field list the objects share for the tabular form (§9.3), else ``None``."""
    first = objects[0]
    if type(first) is not dict or not first:
        return None
    keys = first.keys()
    flat = True  # every value of every object primitive: the common row of a table
    for obj in objects:
        if type(obj) is not dict or len(obj) != len(keys) or obj.keys() != keys:
            return None
        if flat:
            for value in obj.values():
                if type(value) is dict or type(value) is list:
                    flat = False
                    break
    if flat:  # what the loop below finds, without a column list per key
        return tuple([(key, None) for key in keys])
    fields: list[tuple[str, Shape | None]] = []
    for key in keys:
        column = [obj[key] for obj in objects]
        if all(map(_is_primitive, column)):
            fields.append((key, None))
            continue
        nested = _shape(column)
        if nested is None:
            return None
        fields.append((key, nested))
    return tuple(fields)


def _keyed_shape(obj: dict[str, Any]) -> Shape | None:
    return _shape(list(obj.values())) if len(obj) >= 2 else None


def _leaves(obj: dict[str, Any], shape: Shape, into: list[Any]) -> list[Any]:
    for key, nested in shape:
        if nested is None:
            into.append(obj[key])
        else:
            _leaves(obj[key], nested, into)
    return into


class _Renderer:
    """``toon_format``'s renderer over plain values: one line list, forms chosen by shape."""

    def __init__(self, delimiter: str, text: Callable[[str], str] | None) -> None:
        self.delimiter = delimiter
        self.text = text
        self.symbol = "" if delimiter == "," else delimiter
        self.quoted_if_in = _QUOTED_IF_IN[delimiter].search
        self.strings = _strings[delimiter]
        self.lines: list[str] = []

    def root(self, value: Any) -> None:
        kind = type(value)
        if kind is dict:
            shape = _keyed_shape(value)
            if shape is not None:
                self.keyed("", value, shape, 0)
            else:
                self.fields(value, 0)
        elif kind is list:
            if value:
                self.array("", value, 0, tabular=True)
            else:
                self.lines.append("[]")
        elif kind is str and value.startswith("\ufeff"):
            value = self.mapped(value)
            _plain(value)
            self.lines.append(_quote(value))
        else:
            self.lines.append(self.primitive(value))

    def mapped(self, value: str) -> str:
        """``value`` under the text rule, which only a non-ASCII or ``<`` string can need."""
        if self.text is not None and (not value.isascii() or "<" in value):
            return self.text(value)
        return value

    def string(self, value: str) -> str:
        """A string value, quoted only when §7.2 requires it."""
        found = self.strings.get(value)
        if found is not None:
            return found
        if value.isascii() and "<" not in value:
            found = self.quoted(value)
            if len(value) <= _MAX_CACHED_LENGTH:
                _cache(self.strings, value, found)
            return found
        value = self.mapped(value)
        _plain(value)
        return self.quoted(value)

    def quoted(self, value: str) -> str:
        """``value`` quoted if §7.2 requires it."""
        if (
            not value
            or value[0] in " \t-#"
            or value[-1] in " \t"
            or value in _KEYWORDS
            or self.quoted_if_in(value) is not None
            or (value[0] in _NUMBER_START and _NUMERIC_LIKE.fullmatch(value) is not None)
        ):
            return _quote(value)
        return value

    def key(self, key: Any) -> str:
        return _keys.get(key) or _key(key, self.text)

    def primitive(self, value: Any) -> str:
        kind = type(value)
        if kind is str:
            return self.string(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if kind is int:
            return str(value)
        if kind is float:
            return _float(value)
        raise NotPlain(f"a {type(value).__name__}, outside the plain JSON model")

    def join(self, values: list[Any]) -> str:
        return self.delimiter.join(map(self.primitive, values))

    def field_list(self, shape: Shape) -> str:
        entries = (
            self.key(key) + ("" if nested is None else self.field_list(nested))
            for key, nested in shape
        )
        return "{" + self.delimiter.join(entries) + "}"

    def fields(self, obj: dict[str, Any], depth: int) -> None:
        indent = "  " * depth
        lines = self.lines
        for key, value in obj.items():
            encoded = _keys.get(key) or _key(key, self.text)
            # A string field is most fields: written here, without the dispatch of field().
            if type(value) is str:
                lines.append(f"{indent}{encoded}: {self.strings.get(value) or self.string(value)}")
            else:
                self.field(encoded, value, depth)

    def field(self, key: str, value: Any, depth: int) -> None:
        kind = type(value)
        if kind is dict:
            shape = _keyed_shape(value)
            if shape is not None:
                self.keyed(key, value, shape, depth)
            else:
                self.lines.append("  " * depth + key + ":")
                self.fields(value, depth + 1)
        elif kind is list:
            if value:
                self.array(key, value, depth, tabular=True)
            else:
                self.lines.append("  " * depth + key + ": []")
        else:
            self.lines.append("  " * depth + key + ": " + self.primitive(value))

    def array(self, prefix: str, array: list[Any], depth: int, *, tabular: bool) -> None:
        indent = "  " * depth
        head = f"{prefix}[{len(array)}{self.symbol}]"
        if all(map(_is_primitive, array)):
            self.lines.append(f"{indent}{head}: {self.join(array)}")
            return
        shape = _shape(array) if tabular else None
        if shape is not None:
            self.lines.append(f"{indent}{head}{self.field_list(shape)}:")
            row_indent = indent + "  "
            self.lines.extend(row_indent + self.join(_leaves(row, shape, [])) for row in array)
            return
        self.lines.append(indent + head + ":")
        for element in array:
            self.item(element, depth + 1)

    def keyed(self, key: str, obj: dict[str, Any], shape: Shape, depth: int) -> None:
        indent = "  " * depth
        self.lines.append(f"{indent}{key}[{len(obj)}:{self.symbol}]{self.field_list(shape)}:")
        for entry, value in obj.items():
            leaves = self.join(_leaves(value, shape, []))
            self.lines.append(f"{indent}  {self.key(entry)}: {leaves}")

    def item(self, value: Any, depth: int) -> None:
        kind = type(value)
        indent = "  " * depth
        if kind is dict:
            if not value:
                self.lines.append(indent + "-")
                return
            # The object's fields stand at depth + 1; the first moves onto the hyphen line.
            first = len(self.lines)
            self.fields(value, depth + 1)
            self.lines[first] = indent + "- " + self.lines[first][len(indent) + 2 :]
        elif kind is list:
            if value:
                self.array("- ", value, depth, tabular=False)
            else:
                self.lines.append(f"{indent}- [0{self.symbol}]:")
        else:
            self.lines.append(indent + "- " + self.primitive(value))
