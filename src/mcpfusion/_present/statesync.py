"""State sync (SPEC §15): state names, invalidation patterns, and the block a mutation ends with.

A state name says which data a tool action or a resource reads: ``{tool}.{action}`` for an
action, ``{scheme}.{name}`` for a resource URI (``billing://invoices/{id}`` is
``billing.invoices``). A mutation declares the patterns it makes stale
(``invalidates=["billing.*"]``, ``*`` standing for one name segment); after it succeeds,
its response ends with a ``<cache_invalidation>`` block and the server tells resource
subscribers whose URIs match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from dataclasses import replace
from typing import Final

from mcpfusion._errors import DefinitionError
from mcpfusion._present.response import ToolResponse, view_of, with_view
from mcpfusion._wire import format as wire
from mcpfusion._wire.parts import BULLET_KINDS

_SEGMENT: Final = r"[A-Za-z0-9_-]+"
PATTERN: Final = re.compile(rf"(?:{_SEGMENT}|\*)(?:\.(?:{_SEGMENT}|\*))*")
"""An invalidation pattern: dot-separated name segments, ``*`` for any one segment."""

_INVALIDATION: Final = next(kind for kind in BULLET_KINDS if kind.field == "invalidations")
_URI: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://+([^/?#{]*)(?:/([^/?#{]*))?")


def check_patterns(owner: str, patterns: Collection[str]) -> tuple[str, ...]:
    """The patterns of an ``invalidates=`` option, checked, in declaration order.

    Raises:
        DefinitionError: if it is not a collection of well-formed patterns.
    """
    if isinstance(patterns, str) or not isinstance(patterns, Collection):
        raise DefinitionError(
            f"{owner}: invalidates is a list of state-name patterns, e.g. ['billing.*']"
        )
    bad = [p for p in patterns if not isinstance(p, str) or not PATTERN.fullmatch(p)]
    if bad:
        raise DefinitionError(
            f"{owner}: invalidates patterns are dot-separated names, '*' for one segment "
            f"(e.g. 'billing.*', 'reports.revenue'); got {', '.join(map(repr, bad))}"
        )
    return tuple(dict.fromkeys(patterns))


def _regex(pattern: str) -> re.Pattern[str]:
    parts = (_SEGMENT if part == "*" else re.escape(part) for part in pattern.split("."))
    return re.compile(r"\.".join(parts))


def matches(pattern: str, name: str) -> bool:
    """Whether the state name ``name`` is covered by ``pattern`` (``*``: one segment)."""
    return _regex(pattern).fullmatch(name) is not None


def matching(patterns: Iterable[str], names: Iterable[str]) -> list[str]:
    """The names any of ``patterns`` covers, in the order given."""
    compiled = [_regex(p) for p in patterns]
    return [name for name in names if any(c.fullmatch(name) for c in compiled)]


def unmatched(patterns: Iterable[str], names: Collection[str]) -> list[str]:
    """The patterns that cover none of ``names`` (a definition error, SPEC §15)."""
    return [p for p in patterns if not matching([p], names)]


def state_name(uri: str) -> str | None:
    """The state name of a resource URI: ``billing://invoices/INV-1`` -> ``billing.invoices``.

    The scheme, then the first non-empty name after ``://`` (the authority, else the
    first path segment); ``None`` for a URI without one.
    """
    found = _URI.match(uri)
    if found is None:
        return None
    scheme, first, second = found.group(1), found.group(2), found.group(3)
    name = first or second
    return f"{scheme.lower()}.{name}" if name else None


def with_invalidation(
    response: ToolResponse, caused_by: str, patterns: tuple[str, ...]
) -> ToolResponse:
    """``response`` ending with the ``<cache_invalidation>`` block (SPEC §2 kind 7).

    Entries the response already carries (``ResponseBuilder.invalidate``) come first;
    the action's own follow. An error response is returned untouched: a failed mutation
    invalidates nothing.
    """
    if response.is_error:
        return response
    view = view_of(response)
    blocks = list(response.blocks)
    annotations = list(response.annotations)
    earlier: tuple[str, ...] = ()
    if view is not None and view.invalidations:
        earlier = view.invalidations
        del blocks[-1]  # kind 7 is always last
        del annotations[-1:]
    lines = _INVALIDATION.lines(earlier + patterns)
    blocks.append(wire.bullet_block(_INVALIDATION.tag, lines, ("caused_by", caused_by)))
    if annotations:
        annotations.append(None)
    rebuilt = ToolResponse(
        tuple(blocks), response.is_error, response.structured_content, tuple(annotations)
    )
    if view is None:
        return rebuilt
    return with_view(rebuilt, replace(view, invalidations=tuple(lines), caused_by=caused_by))


def freshness(stale: bool, fresh_for: float | None) -> str:
    """The marker a description carries after an action's text (SPEC §15), or ``""``."""
    if stale:
        return "(always refetch)"
    if fresh_for is not None:
        return f"(fresh for {fresh_for:g} s)"
    return ""


def check_freshness(owner: str, stale: object, fresh_for: object) -> float | None:
    """``fresh_for`` as seconds, checked against ``stale``.

    Raises:
        DefinitionError: on a non-bool ``stale``, a ``fresh_for`` that is not a positive
            number, or both.
    """
    if not isinstance(stale, bool):
        raise DefinitionError(f"{owner}: stale must be True or False; got {stale!r}")
    if fresh_for is None:
        return None
    if (
        isinstance(fresh_for, bool)
        or not isinstance(fresh_for, int | float)
        or not (fresh_for > 0 and math.isfinite(fresh_for))
    ):
        raise DefinitionError(f"{owner}: fresh_for is a positive number of seconds")
    if stale:
        raise DefinitionError(f"{owner}: an action is either stale or fresh_for seconds, not both")
    return float(fresh_for)
