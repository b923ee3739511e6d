"""The workflow gate: a state machine per caller deciding which actions it may call now."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from transitions import Machine

from mcpfusion._errors import DefinitionError
from mcpfusion._present.failures import out_of_state
from mcpfusion._present.response import view_of
from mcpfusion._tools.caller_state import (
    DEFAULT_TTL,
    RESERVED_PREFIX,
    CallerState,
    caller_state_of,
)
from mcpfusion._tools.context import NO_META
from mcpfusion._tools.targets import Route, _with_suggestions

if TYPE_CHECKING:
    from mcpfusion._identity import Identity
    from mcpfusion._present.response import ToolResponse
    from mcpfusion._tools.context import Context

logger = logging.getLogger("mcpfusion")

ANY_STATE: Final = "*"
"""A transition's source meaning every state."""

Transition = tuple[str, str | Sequence[str], str]
"""``(trigger, source or sources, destination)``; a trigger ``"tool.action"`` fires when
that action succeeds, any other name when a handler fires it (``Workflow.fire``)."""


class Workflow:
    """A declared state machine each caller moves through, gating actions by its state.

    Each caller (identity, tenant and conversation, as ``ctx.caller_state``) starts in
    ``initial``. An action named in ``allowed`` (``"tool.action"``, or ``"tool"`` for all of
    a tool's actions) is listed and callable only in the states given there; every other
    action is always available. A transition whose trigger is ``"tool.action"`` fires when
    that action succeeds; one with any other trigger fires when a handler calls
    ``await workflow.fire(ctx, trigger)``. Example::

        review = Workflow(
            ["draft", "reviewed", "paid"],
            initial="draft",
            transitions=[
                ("invoices.review", "draft", "reviewed"),
                ("invoices.mark_paid", "reviewed", "paid"),
            ],
            allowed={"invoices.mark_paid": ["reviewed"]},
        )
        app = Fusion("billing", workflow=review)

    The states and transitions are a ``transitions`` ``Machine`` (without models: each
    caller's state is a value of its caller state, so any worker can serve its next call).

    Raises:
        DefinitionError: on an empty or repeated state, a transition or an ``allowed``
            entry naming a state that is not declared, or a bad ``ttl``.
    """

    def __init__(
        self,
        states: Sequence[str],
        *,
        initial: str,
        transitions: Iterable[Transition] = (),
        allowed: Mapping[str, Collection[str]] | None = None,
        name: str = "workflow",
        ttl: float = DEFAULT_TTL,
    ) -> None:
        names = list(states)
        if not names or not all(isinstance(s, str) and s for s in names):
            raise DefinitionError("a workflow's states are non-empty str names")
        if len(set(names)) != len(names):
            raise DefinitionError(f"workflow '{name}' repeats a state: {names}")
        known = set(names)
        if initial not in known:
            raise DefinitionError(f"workflow '{name}': initial state '{initial}' is not declared")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
            raise DefinitionError(f"workflow '{name}': ttl is a positive number of seconds")
        edges = []
        for trigger, sources, dest in transitions:
            listed = [sources] if isinstance(sources, str) else list(sources)
            for state in [*listed, dest]:
                if state != ANY_STATE and state not in known:
                    raise DefinitionError(
                        f"workflow '{name}': transition '{trigger}' names an undeclared "
                        f"state '{state}'"
                    )
            edges.append({"trigger": trigger, "source": listed, "dest": dest})
        self.allowed: dict[str, frozenset[str]] = {}
        for target, in_states in (allowed or {}).items():
            unknown = set(in_states) - known
            if isinstance(in_states, str) or unknown:
                raise DefinitionError(
                    f"workflow '{name}': '{target}' is allowed in a collection of declared "
                    f"states; got {in_states!r}"
                )
            self.allowed[target] = frozenset(in_states)
        self.name = name
        self.states = tuple(names)
        self.initial = initial
        self.ttl = float(ttl)
        self._field = f"{RESERVED_PREFIX}workflow.{name}"
        self.machine = Machine(
            model=None, states=names, initial=initial, transitions=edges, auto_transitions=False
        )

    def __repr__(self) -> str:
        return f"Workflow({self.name!r}, states={list(self.states)!r})"

    def check(self, actions: Mapping[str, Iterable[str]]) -> None:
        """Checks the names against the app's tools (``actions``: each tool's actions).

        Raises:
            DefinitionError: on an ``allowed`` entry naming no tool or action, or a
                ``"tool.action"`` trigger whose tool has no such action: a typo would
                otherwise leave an action ungated, or a gate that never opens.
        """
        known = set(actions) | {f"{t}.{a}" for t, names in actions.items() for a in names}
        for target in self.allowed:
            if target not in known:
                raise DefinitionError(
                    f"workflow '{self.name}': allowed names '{target}', which is no tool "
                    "or 'tool.action' of the app"
                )
        for trigger in self.machine.events:
            tool, dot, _ = trigger.rpartition(".")
            if dot and tool in actions and trigger not in known:
                raise DefinitionError(
                    f"workflow '{self.name}': trigger '{trigger}' names no action of '{tool}'"
                )

    # -- what a state allows -------------------------------------------------------------

    def gates(self, tool: str, action: str) -> frozenset[str] | None:
        """The states ``tool``'s ``action`` is allowed in, ``None`` when it is not gated."""
        found = self.allowed.get(f"{tool}.{action}")
        return found if found is not None else self.allowed.get(tool)

    def allows(self, tool: str, action: str, state: str) -> bool:
        """Whether ``tool``'s ``action`` may be called in ``state``."""
        states = self.gates(tool, action)
        return states is None or state in states

    def next_state(self, trigger: str, state: str) -> str | None:
        """Where ``trigger`` leads from ``state``, ``None`` when it leads nowhere from it."""
        for transition in self.machine.get_transitions(trigger=trigger, source=state):
            return str(transition.dest)
        for transition in self.machine.get_transitions(trigger=trigger, source=ANY_STATE):
            return str(transition.dest)
        return None

    def leading_to(self, targets: Collection[str], state: str) -> list[str]:
        """The actions callable in ``state`` that start a shortest way into ``targets``.

        Only actions (``"tool.action"`` triggers) allowed in ``state`` are named, so the
        advice never points outside the gate.
        """
        first: dict[str, str] = {}  # state reached -> the trigger that started the way
        queue = deque([state])
        seen = {state}
        found: list[str] = []
        while queue and not found:
            for _ in range(len(queue)):
                at = queue.popleft()
                # A '*' source is kept as such by the machine: asked for beside the state.
                for trigger in self.machine.get_triggers(at, ANY_STATE):
                    dest = self.next_state(trigger, at)
                    if dest is None or dest in seen:
                        continue
                    start = first.get(at, trigger)
                    if at == state and not self._callable(trigger, state):
                        continue
                    seen.add(dest)
                    first[dest] = start
                    if dest in targets and start not in found:
                        found.append(start)
                    queue.append(dest)
        return sorted(found)

    def _callable(self, trigger: str, state: str) -> bool:
        tool, dot, action = trigger.rpartition(".")
        return bool(dot) and self.allows(tool, action, state)

    # -- each caller's state -------------------------------------------------------------

    def _state_in(self, stored: Any) -> str:
        # A value from the store is data like any other: a state this workflow no longer
        # declares (an older deployment's) starts the caller over.
        return stored if isinstance(stored, str) and stored in self.machine.states else self.initial

    async def state_of(self, identity: Identity | None, meta: Mapping[str, Any] = NO_META) -> str:
        """The current state of the caller with ``identity`` (sending ``meta``)."""
        return self._state_in(await caller_state_of(identity, meta).get(self._field))

    async def state(self, ctx: Context) -> str:
        """The current state of the caller of ``ctx``'s call."""
        return await self.state_of(ctx.identity, ctx.meta)

    async def move(self, caller: CallerState, state: str) -> None:
        """Puts ``caller`` in ``state`` (its TTL starts again)."""
        await caller._put(self._field, state, self.ttl)

    async def fire(self, ctx: Context, trigger: str) -> bool:
        """Fires ``trigger`` for the caller of ``ctx``'s call; whether its state moved."""
        return await self.advance(trigger, ctx.identity, ctx.meta)

    async def advance(
        self, trigger: str, identity: Identity | None, meta: Mapping[str, Any]
    ) -> bool:
        """Fires ``trigger`` for the caller with ``identity``; whether its state moved."""
        caller = caller_state_of(identity, meta)
        state = self._state_in(await caller.get(self._field))
        dest = self.next_state(trigger, state)
        if dest is None or dest == state:
            return False
        await self.move(caller, dest)
        return True

    async def refuse(
        self, tool: str, action: str, identity: Identity | None, meta: Mapping[str, Any]
    ) -> ToolResponse | None:
        """The ``OUT_OF_STATE`` result when the caller's state does not allow the action."""
        states = self.gates(tool, action)
        if states is None:
            return None
        state = await self.state_of(identity, meta)
        if state in states:
            return None
        return out_of_state(tool, action, state, sorted(states), self.leading_to(states, state))

    async def after_success(
        self,
        response: ToolResponse,
        route: Route,
        action: str,
        identity: Identity | None,
        meta: Mapping[str, Any],
    ) -> tuple[ToolResponse, bool]:
        """Fires ``action``'s transition after it succeeded, then prunes the response's
        suggestions; whether the caller moved.

        The handler has run: if the caller's state cannot be written or read now (its
        store is down), its result is still sent, unpruned, and the failure logged; the
        caller stays where it was, so the gate it would have opened stays closed.
        """
        try:
            moved = await self.advance(action, identity, meta)
            return await self.pruned(response, route, identity, meta), moved
        except Exception:
            logger.warning(
                "workflow '%s': %s succeeded, its transition failed",
                self.name,
                action,
                exc_info=True,
            )
            return response, False

    async def pruned(
        self,
        response: ToolResponse,
        route: Route,
        identity: Identity | None,
        meta: Mapping[str, Any],
    ) -> ToolResponse:
        """``response`` without the suggestions its caller's state does not allow, so a
        handler's advice never points outside the gate (checked after the call moved it)."""
        view = view_of(response)
        if view is None or not view.suggestions:
            return response
        state = await self.state_of(identity, meta)
        kept = [s for s in view.suggestions if self._suggestable(s.tool, route, state)]
        if len(kept) == len(view.suggestions):
            return response
        return _with_suggestions(response, view, kept)

    def _suggestable(self, target: str, route: Route, state: str) -> bool:
        """Whether a suggestion's target may be called in ``state``: an action allowed
        there, or a tool with such an action (a name the app does not serve is the
        catalog's to drop)."""
        if target in route.actions or target in route.tool.actions:
            return self.allows(route.tool.name, target, state)
        tool, dot, action = target.rpartition(".")
        if dot:
            return self.allows(tool, action, state)
        states = self.allowed.get(target)
        return states is None or state in states

    def shown(
        self,
        listed: Sequence[dict[str, Any]],
        actions: Mapping[str, Iterable[tuple[str, str]]],
        state: str,
    ) -> list[dict[str, Any]]:
        """The tool definitions shown in ``state``: those with an action it allows.

        ``actions`` maps each listed name to its ``(tool, action)`` pairs.
        """
        return [
            tool
            for tool in listed
            if any(self.allows(t, a, state) for t, a in actions.get(tool["name"], ()))
        ]
