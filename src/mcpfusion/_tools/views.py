"""A Presenter per caller: ``returns=`` as a mapping of scopes to views, or a selector."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.presenter import Presenter

ANYONE: Final = "*"
"""The key of a view mapping that serves every caller holding none of the other keys."""

Selector: TypeAlias = Callable[[Identity | None], Presenter | None]
"""Picks a caller's Presenter from its identity; ``None`` refuses the caller."""

Returns: TypeAlias = Presenter | Mapping[str, Presenter] | Selector | None
"""What an action's ``returns=`` takes: one Presenter, one per scope, or a selector."""


class Views:
    """The Presenters an action renders with, one chosen per caller.

    A mapping's keys are scopes (a role is a scope the caller holds): the first key in
    the mapping's order that the caller holds picks its view; ``"*"`` serves the others.
    Without ``"*"``, a caller holding none of the keys is refused (``FORBIDDEN``) before
    the handler runs, and does not see the action in ``tools/list``. A selector is called
    with the caller's identity (``None`` when anonymous) on every call; ``None`` refuses.

    Raises:
        DefinitionError: on an empty mapping, a key that is not a scope name, or a value
            that is not a Presenter.
    """

    __slots__ = ("_default", "_scoped", "presenters", "scopes", "selector")

    def __init__(self, owner: str, returns: Mapping[str, Presenter] | Selector) -> None:
        self.selector: Selector | None = None
        self._scoped: tuple[tuple[str, Presenter], ...] = ()
        self._default: Presenter | None = None
        if isinstance(returns, Mapping):
            if not returns:
                raise DefinitionError(f"{owner}: returns= maps scopes to Presenters; it is empty")
            for key, view in returns.items():
                if not isinstance(key, str) or not key or key.isspace():
                    raise DefinitionError(
                        f"{owner}: a key of returns= is a scope name (or '*'); got {key!r}"
                    )
                if not isinstance(view, Presenter):
                    raise DefinitionError(
                        f"{owner}: returns={{{key!r}: ...}} takes a Presenter; got {view!r}"
                    )
            self._default = returns.get(ANYONE)
            self._scoped = tuple((k, v) for k, v in returns.items() if k != ANYONE)
            self.presenters: tuple[Presenter, ...] = tuple(dict.fromkeys(returns.values()))
        elif callable(returns):
            self.selector = returns
            self.presenters = ()  # known only per call
        else:
            raise DefinitionError(
                f"{owner}: returns= takes a Presenter, a mapping of scopes to Presenters, or "
                f"a function of the caller's identity; got {returns!r}"
            )
        self.scopes = frozenset(key for key, _ in self._scoped)
        """The scopes that choose a view: they change what a caller sees."""

    def __repr__(self) -> str:
        if self.selector is not None:
            return f"Views({self.selector!r})"
        keys = [key for key, _ in self._scoped] + ([ANYONE] if self._default else [])
        return f"Views({', '.join(keys)})"

    @property
    def refuses(self) -> bool:
        """Whether some caller may get no view: a selector, or a mapping without ``"*"``."""
        return self.selector is not None or self._default is None

    def pick(self, identity: Identity | None) -> Presenter | None:
        """The Presenter for ``identity``; ``None`` when the caller gets none.

        Raises:
            TypeError: when a selector returns something other than a Presenter or None.
        """
        if self.selector is not None:
            chosen: Any = self.selector(identity)
            if chosen is not None and not isinstance(chosen, Presenter):
                raise TypeError(f"the returns= selector gave {chosen!r}, not a Presenter or None")
            return chosen
        held = scopes_of(identity)
        for scope, view in self._scoped:
            if scope in held:
                return view
        return self._default

    def shown_to(self, scopes: frozenset[str]) -> bool:
        """Whether a caller holding ``scopes`` is listed the action (a selector: always)."""
        if self.selector is not None or self._default is not None:
            return True
        return not self.scopes.isdisjoint(scopes)

    def view_for(self, scopes: frozenset[str]) -> Presenter | None:
        """The view a caller holding ``scopes`` gets, for its listing (a selector: ``None``)."""
        if self.selector is not None:
            return None
        for scope, view in self._scoped:
            if scope in scopes:
                return view
        return self._default
