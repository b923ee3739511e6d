"""Suggestion and ``available_actions`` targets: checked against the catalog, written as listed.

A target names an action as ``tool.action`` (``billing.remind``), by the MCP tool that
lists it (``billing_remind`` when flat, ``issues_write.close`` when split), as a bare action
of the tool being called (``remind``), or names a listed tool (``billing``). It is sent the
way the exposition lists it: ``billing.remind`` becomes ``billing_remind`` under flat
exposition. A target naming nothing the app serves is never sent: static ones (a
Presenter's ``suggestions=``) stop the app when its catalog is built; dynamic ones are
dropped from the response and logged, once per target.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Final, Protocol

from mcpfusion._present.failures import preview
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import (
    ToolResponse,
    envelope_of,
    error_response,
    with_view,
)
from mcpfusion._tools.action import Action
from mcpfusion._tools.tool import Tool
from mcpfusion._wire.format import bullet_block
from mcpfusion._wire.parts import BULLET_KINDS, ResponseView, Suggestion, block_index

logger = logging.getLogger("mcpfusion")

_SUGGESTIONS: Final = next(kind for kind in BULLET_KINDS if kind.field == "suggestions")
_TOOL: Final = attrgetter("tool")


class Route(Protocol):
    """Where a listed name leads, as targets need it (``_catalog.Route`` is one)."""

    @property
    def tool(self) -> Tool:
        """The tool."""
        ...

    @property
    def action(self) -> Action | None:
        """The action a flat name fixes, else ``None``."""
        ...

    @property
    def actions(self) -> Mapping[str, Action]:
        """The actions reachable through the name."""
        ...


@dataclass(frozen=True, slots=True)
class Targets:
    """Every way a target may name what an app serves, mapped to how it is sent.

    Attributes:
        spellings: accepted spelling -> the spelling sent.
        known: the actions, as ``tool.action``, for error messages.
    """

    spellings: Mapping[str, str]
    known: tuple[str, ...]
    _logged: set[str]
    _as_sent: frozenset[str] = frozenset()  # spellings sent as they are written
    # Per route (by id: routes live as long as their catalog, and so does this): the
    # targets a response of that route sends as they are written, worked out once.
    _written: dict[int, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, routes: Mapping[str, Route]) -> Targets:
        """The targets of a catalog's routes (listed name -> route)."""
        spellings: dict[str, str] = {}
        known: list[str] = []
        for listed, route in routes.items():
            if route.action is None:
                spellings[listed] = listed
            for action in route.actions.values():
                wire = listed if route.action is not None else f"{listed}.{action.name}"
                canonical = f"{route.tool.name}.{action.name}"
                spellings.setdefault(canonical, wire)
                spellings[wire] = wire
                known.append(canonical)
        as_sent = frozenset(k for k, v in spellings.items() if k == v)
        return cls(spellings, tuple(known), set(), as_sent)

    def spell(self, target: str, route: Route | None) -> str | None:
        """How ``target`` is sent in a response of ``route`` (``None``: of no tool, a
        resource's or a prompt's), or ``None`` if it names nothing."""
        if route is not None:
            if route.action is None and target in route.actions:
                return target  # a bare action of the tool called: the 'action' value to send
            if target in route.tool.actions:
                return self.spellings.get(f"{route.tool.name}.{target}")
        return self.spellings.get(target)

    def unknown(self, targets: Iterable[str], route: Route | None) -> list[str]:
        """The targets naming nothing the app serves."""
        return [target for target in targets if self.spell(target, route) is None]

    def checked(self, response: ToolResponse, route: Route | None) -> ToolResponse:
        """``response`` with its suggestions and available actions as listed, unknown
        dropped; ``route`` is the tool called, ``None`` for a resource or a prompt."""
        view = getattr(response, "_view", None)  # ``view_of``, without its frame
        if view is not None and not view.suggestions:
            return response  # the common response: nothing to check (no envelope either)
        if view is not None and not self._as_written(map(_TOOL, view.suggestions), route):
            suggestions = [s for s in map(self._suggestion(route), view.suggestions) if s]
            if suggestions != list(view.suggestions):
                response = _with_suggestions(response, view, suggestions)
        # A response carries a view or an envelope, never both: a missing slot costs a
        # caught AttributeError.
        envelope = envelope_of(response) if view is None else None
        if envelope is not None and not self._as_written(envelope.available_actions, route):
            actions = [a for a in map(self._target(route), envelope.available_actions) if a]
            if actions != list(envelope.available_actions):
                response = error_response(replace(envelope, available_actions=actions))
        return response

    def _as_written(self, targets: Iterable[str], route: Route | None) -> bool:
        """Whether every target is sent as it is written (the common case, checked fast)."""
        if route is None:
            written = self._as_sent
        elif (known := self._written.get(id(route))) is not None:
            written = known
        else:
            written = self._written.setdefault(id(route), self._written_by(route))
        for target in targets:  # noqa: SIM110 - all() would add a generator on the hot path
            if target not in written:
                return False
        return True

    def _written_by(self, route: Route) -> frozenset[str]:
        """The targets a response of ``route`` sends as written: a bare action of the
        grouped tool called, and the spellings sent as written that name no bare action
        of its tool (those are respelled as ``tool.action``)."""
        bare = set(route.actions) if route.action is None else set()
        return frozenset(bare | (self._as_sent - set(route.tool.actions)))

    def _target(self, route: Route | None) -> Callable[[str], str | None]:
        def spell(target: str) -> str | None:
            spelled = self.spell(target, route)
            if spelled is None:
                self._dropped(target)
            return spelled

        return spell

    def _suggestion(self, route: Route | None) -> Callable[[Suggestion], Suggestion | None]:
        spell = self._target(route)

        def respelled(suggestion: Suggestion) -> Suggestion | None:
            tool = spell(suggestion.tool)
            if tool is None:
                return None
            return suggestion if tool == suggestion.tool else Suggestion(tool, suggestion.reason)

        return respelled

    def _dropped(self, target: str) -> None:
        if target in self._logged:
            return
        self._logged.add(target)
        logger.warning(
            "a response named %s, which is no tool or action of this app; it was not sent "
            "(known actions: %s)",
            preview(target),
            ", ".join(self.known),
        )


def _with_suggestions(
    response: ToolResponse, view: ResponseView, suggestions: list[Suggestion]
) -> ToolResponse:
    """``response`` with its suggestions block rendered again from ``suggestions``."""
    at = block_index(view, _SUGGESTIONS.field)
    lines = _SUGGESTIONS.lines(tuple(suggestions))
    blocks = list(response.blocks)
    annotations = list(response.annotations)
    if lines:
        blocks[at] = bullet_block(_SUGGESTIONS.tag, lines)
    else:
        del blocks[at]
        del annotations[at : at + 1]
    sent = tuple(map(_SUGGESTIONS.read, lines))
    rebuilt = replace(response, blocks=tuple(blocks), annotations=tuple(annotations))
    return with_view(rebuilt, replace(view, suggestions=sent))


def static_problems(presenter: Presenter, targets: Targets, route: Route) -> list[str]:
    """Why a Presenter (or one it embeds) cannot be served: a static suggestion naming no
    action, or a redact path naming no field."""
    problems = []
    for suggestion in presenter.static_suggestions:
        if targets.spell(suggestion.tool, route) is None:
            problems.append(
                f"Presenter '{presenter.name}' suggests {suggestion.entry!r}, but "
                f"'{suggestion.tool}' is no tool or action of this app; known actions: "
                f"{', '.join(targets.known)}"
            )
    for path in presenter.unknown_redactions():
        problems.append(
            f"Presenter '{presenter.name}': redact path {path!r} names no field; the data "
            f"holds {', '.join(presenter.select_keys)}"
        )
    for child in presenter.embeds.values():
        problems.extend(static_problems(child, targets, route))
    return problems
