"""Redaction (SPEC §16): the redacted paths, their censor, and the values they replaced.

A Presenter names the fields to redact by path: ``ssn``, ``*.email`` (``*`` is any key),
``lines[*].cost`` (``[*]`` is any list item). Callbacks run on the real values; then each
redacted value of the rows in view is replaced in the data by the censor's output and
recorded (``Traces``), for ``scrubber.Scrubber`` to search for its exact string form in the
data's other strings (a phone typed into a note) and every other part of the response.
"""

from __future__ import annotations

import collections.abc
import json
import operator
import re
import types
import typing
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Final

from pydantic import BaseModel

from mcpfusion._errors import DefinitionError
from mcpfusion._present.data_search import built_values_at, values_at
from mcpfusion._present.masking import seen_through
from mcpfusion._present.trace_finder import MIN_TRACE

Censor = str | Callable[[Any], Any]
"""What a redacted value becomes: a fixed text, or a function of the value."""

DEFAULT_CENSOR: Final = "[REDACTED]"


_ANY: Final = "*"
_ITEMS: Final = "[*]"
_SEGMENT: Final = re.compile(r"(\*|[^.\[\]*]+)((?:\[\*\])*)")


def parse_path(owner: str, path: str) -> tuple[str, ...]:
    """``lines[*].cost`` as its steps: ``("lines", "[*]", "cost")``.

    Raises:
        DefinitionError: if the path is not keys, ``*`` and ``[*]`` joined by dots.
    """
    if not isinstance(path, str) or not path:
        raise DefinitionError(f"{owner}: a redact path is a non-empty str; got {path!r}")
    steps: list[str] = []
    for segment in path.split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            raise DefinitionError(
                f"{owner}: redact path {path!r} is not keys, '*' and '[*]' joined by dots "
                "(e.g. 'ssn', '*.email', 'lines[*].cost')"
            )
        steps.append(match.group(1))
        steps.extend([_ITEMS] * (len(match.group(2)) // len(_ITEMS)))
    return tuple(steps)


class Traces:
    """The redacted values of the rows in view, each with what replaced it.

    Filled by ``Redaction.censor`` and searched for by ``Scrubber``; values are told apart
    and turned into their string forms only when a search needs them.
    """

    __slots__ = ("_fixed", "_mapped")

    def __init__(self) -> None:
        self._fixed: list[tuple[list[Any], str]] = []  # values, and the one text for them
        self._mapped: dict[Any, Any] = {}  # value -> what a censor function made of it

    def __bool__(self) -> bool:
        return bool(self._fixed or self._mapped)

    def add(self, values: list[Any], censored: str | list[Any]) -> None:
        """Records ``values``, replaced by ``censored`` (one text, or one value each)."""
        if isinstance(censored, str):
            self._fixed.append((values, censored))
            return
        for value, replacement in zip(values, censored, strict=True):
            for leaf in _leaves(value):
                self._mapped.setdefault(leaf, replacement)

    def forms(self) -> dict[str, str]:
        """Each searchable string form (4+ characters, numbers of 4+ digits) -> its text.

        A dict or list redacted whole stands for the strings and numbers inside it.
        """
        return self.joined_forms()[0]

    def joined_forms(self) -> tuple[dict[str, str], str]:
        """``forms``, and the forms joined by NUL characters (for the finder) or ``""``."""
        found: dict[Any, str] = {}
        texts = {text for _, text in self._fixed}
        if len(texts) == 1:  # one censor text, the common case: one pass in C, in any order
            try:
                found = dict.fromkeys(chain.from_iterable(map(_VALUES, self._fixed)), *texts)
            except TypeError:  # unhashable: a dict or list redacted whole
                found = {}
        if not found:
            for values, text in reversed(self._fixed):  # the first text recorded wins
                try:
                    found.update(dict.fromkeys(values, text))
                except TypeError:  # unhashable: a dict or list redacted whole
                    found.update((leaf, text) for v in values for leaf in _leaves(v))
        for value, replacement in reversed(self._mapped.items()):
            found[value] = _text(replacement)
        try:  # in C: the common case, strings only; the join is the finder's too
            return found, "\0".join(found)
        except TypeError:  # a number or other value among them
            pass
        forms: dict[str, str] = {}
        for value, text in found.items():
            if isinstance(value, str):
                forms[value] = text
            elif isinstance(value, int | float) and not isinstance(value, bool):
                digits = str(value)
                if sum(char.isdigit() for char in digits) >= MIN_TRACE:
                    forms.setdefault(digits, text)
        return forms, ""


_VALUES: Final = operator.itemgetter(0)


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


class Redaction:
    """The redacted paths of one Presenter and its censor.

    Each path is compiled once into steps that each handle every row at once, so
    redacting a field of 10,000 rows costs about a millisecond.

    Args:
        owner: ``Presenter 'Name'``, for error messages.
        paths: the paths to redact.
        censor: a replacement text, or a function of the value (e.g. keeping an email's
            domain); ``[REDACTED]`` by default.
        schema: the Presenter's schema. A path through containers that masking builds
            (models, typed lists and dicts) writes into them; any other path copies what
            it passes through first (``_rebuilt``).

    Raises:
        DefinitionError: on a malformed path or a bad censor.
    """

    __slots__ = ("_censor", "_visits", "_written", "paths")

    def __init__(
        self, owner: str, paths: Sequence[str], censor: Censor, schema: Any = None
    ) -> None:
        if isinstance(paths, str):
            raise DefinitionError(f"{owner}: redact takes a list of paths, not a str")
        if not (isinstance(censor, str) or callable(censor)):
            raise DefinitionError(f"{owner}: censor is a str or a function; got {censor!r}")
        self._written = tuple(paths)
        self.paths = tuple(parse_path(owner, path) for path in self._written)
        self._censor = censor
        self._visits = tuple(
            _compiled(steps, copy=not _rebuilt(schema, steps)) for steps in self.paths
        )

    def unknown(self, keys: Sequence[str]) -> list[str]:
        """The paths whose first key is none of ``keys`` (the data's top-level keys)."""
        return [
            path
            for path, steps in zip(self._written, self.paths, strict=True)
            if steps[0] not in (_ANY, *keys)
        ]

    @property
    def places_text(self) -> bool:
        """Whether every value censored becomes the fixed text, never an object a censor
        function returned (which may be shared: a constant, another call's value)."""
        return isinstance(self._censor, str)

    def filled(self) -> tuple[tuple[tuple[str, ...], ...], str]:
        """The paths through keys only, which ``censor`` fills with one fixed text, and
        that text; none for a censor function, whose outputs may hold anything."""
        if not isinstance(self._censor, str):
            return (), ""
        keyed = tuple(s for s in self.paths if _ANY not in s and _ITEMS not in s)
        return keyed, self._censor

    def censor(self, rows: list[Any], traces: Traces) -> None:
        """Replaces every redacted value of ``rows`` in place, recording them in ``traces``.

        The rows are the framework's own (masking made them) and every callback has run,
        so writing in place changes nothing anyone else reads. ``None`` is left alone:
        there is nothing to hide.
        """
        for visit in self._visits:
            visit(rows, _Sink(self._censor, traces))


class _Sink:
    """Where a path's last step sends what it found: replaced and recorded, all at once."""

    __slots__ = ("censor", "traces")

    def __init__(self, censor: Censor, traces: Traces) -> None:
        self.censor = censor
        self.traces = traces

    def replace(self, nodes: list[Any], keys: Iterable[Any], values: list[Any]) -> None:
        """Replaces ``nodes[i][keys[i]]`` (whose value is ``values[i]``, never ``None``)."""
        # map() over setitem writes in C: a few tens of nanoseconds a value.
        if isinstance(self.censor, str):
            deque(map(operator.setitem, nodes, keys, repeat(self.censor)), maxlen=0)
            self.traces.add(values, self.censor)
        else:
            censored = list(map(self.censor, values))
            deque(map(operator.setitem, nodes, keys, censored), maxlen=0)
            self.traces.add(values, censored)


Visit = Callable[[list[Any], _Sink], None]
"""One step of a compiled path: takes every node the step before reached."""


def _compiled(steps: tuple[str, ...], copy: bool) -> Visit:
    """A path as steps, each handing every node it reaches to the next at once."""
    # Without copy the rows are masking's plain dicts (none with __missing__): the first
    # step reads them in C (``built_values_at``); deeper containers may be any Mapping.
    visit = _last(steps[-1], fast=not copy and len(steps) == 1)
    for depth in range(len(steps) - 2, -1, -1):
        visit = _step(steps[depth], visit, copy, fast=not copy and depth == 0)
    return visit


def _last(step: str, fast: bool) -> Visit:
    """The last step: the values it reaches are replaced (``fast``: as ``_step``)."""
    if step in (_ITEMS, _ANY):

        def each(nodes: list[Any], sink: _Sink) -> None:
            found = [
                (node, key, value)
                for node in nodes
                for key, value in _entries(node, step)
                if value is not None
            ]
            if found:
                sink.replace([f[0] for f in found], [f[1] for f in found], [f[2] for f in found])

        return each

    def key(nodes: list[Any], sink: _Sink) -> None:
        values = built_values_at(nodes, step) if fast else values_at(nodes, step)
        if None in values:  # absent or None: nothing to hide
            kept = [(n, v) for n, v in zip(nodes, values, strict=True) if v is not None]
            nodes, values = [n for n, _ in kept], [v for _, v in kept]
        if values:
            sink.replace(nodes, repeat(step), values)

    return key


def _step(step: str, inner: Visit, copy: bool, fast: bool = False) -> Visit:
    """An inner step: every node one level down, handed on at once.

    With ``copy``, each container reached is replaced in its parent by a shallow copy
    before anything is written into it, so data the mask passed through as it was (a field
    typed ``Any``) is never changed under the caller. With ``fast``, the nodes are plain
    dicts and a key is read in C (``built_values_at``).
    """

    def visit(nodes: list[Any], sink: _Sink) -> None:
        if copy:
            below = _copied(nodes, step)
        elif step == _ITEMS:
            below = [item for node in nodes if isinstance(node, list) for item in node]
        elif step == _ANY:
            below = [v for node in nodes if isinstance(node, dict) for v in node.values()]
        else:
            below = built_values_at(nodes, step) if fast else values_at(nodes, step)
            if None in below:
                below = [node for node in below if node is not None]
        if below:
            inner(below, sink)

    return visit


def _copied(nodes: list[Any], step: str) -> list[Any]:
    """The containers one step below ``nodes``, each replaced in its parent by a copy."""
    below: list[Any] = []
    for node in nodes:
        for key, child in _entries(node, step) if step in (_ITEMS, _ANY) else _keyed(node, step):
            if isinstance(child, dict | list):
                node[key] = child = child.copy()
                below.append(child)
    return below


def _keyed(node: Any, key: str) -> Iterable[tuple[Any, Any]]:
    return ((key, node[key]),) if isinstance(node, dict) and key in node else ()


def _entries(node: Any, step: str) -> Iterable[tuple[Any, Any]]:
    """A list's ``(index, item)`` pairs for ``[*]``, a dict's items for ``*``."""
    if step == _ITEMS:
        return enumerate(node) if isinstance(node, list) else ()
    return node.items() if isinstance(node, dict) else ()


def _rebuilt(schema: Any, steps: tuple[str, ...]) -> bool:
    """Whether every container a path goes into is one masking builds anew for each call.

    Masking rebuilds models, TypedDicts, lists and dicts, but passes a value typed ``Any``
    through as it is: writing into such a value would change the caller's data.
    """
    current = schema
    for step in steps[:-1]:
        child = _child_type(current, step)
        if child is None or not _container(child):
            return False
        current = child
    return current is not None


def _child_type(kind: Any, step: str) -> Any:
    """The type of the values one step into a container type, or ``None`` if unknown."""
    kind = _plain_type(kind)
    origin = typing.get_origin(kind) or kind
    args = [a for a in typing.get_args(kind) if a is not Ellipsis]
    if step == _ITEMS:
        return args[0] if origin in _LISTS and len(args) == 1 else None
    if origin in _DICTS:
        return args[1] if len(args) == 2 else None
    if step == _ANY or not isinstance(kind, type):
        return None
    if issubclass(kind, BaseModel):
        field = seen_through(kind).model_fields.get(step)
        return None if field is None else field.annotation
    if typing.is_typeddict(kind):
        return typing.get_type_hints(kind).get(step)
    return None


def _container(kind: Any) -> bool:
    kind = _plain_type(kind)
    origin = typing.get_origin(kind) or kind
    if origin in _LISTS or origin in _DICTS:
        return True
    return isinstance(kind, type) and (issubclass(kind, BaseModel) or typing.is_typeddict(kind))


def _plain_type(kind: Any) -> Any:
    """``kind`` without ``Annotated`` and without the ``None`` of an optional."""
    if typing.get_origin(kind) is typing.Annotated:
        return _plain_type(typing.get_args(kind)[0])
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(kind) if a is not type(None)]
        return _plain_type(rest[0]) if len(rest) == 1 else None
    return kind


_LISTS: Final = (list, tuple, collections.abc.Sequence)
_DICTS: Final = (dict, collections.abc.Mapping)


def _text(value: Any) -> str:
    """A censor's output as it is written in text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return DEFAULT_CENSOR  # a censor's output that is no JSON value hides what it replaces
