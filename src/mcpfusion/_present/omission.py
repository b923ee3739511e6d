"""Leaving out ``None`` values of fields declared optional with a ``None`` default (omit_none).

A field ``assignee: str | None = None`` that is ``None`` says nothing the schema does not
already say; ``omit_none=True`` drops such entries from the data block, at every nesting
level the schema declares. A field without a default (``str | None``) is kept: there
``None`` is a value. ``MISSING`` (pydantic's sentinel) is the alternative that needs no
option: a field that is absent stays absent.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, RootModel


@dataclass(slots=True)
class Plan:
    """What to leave out of a row of one model: its fields, and the models inside it."""

    fields: frozenset[str] = frozenset()
    nested: dict[str, Plan] = field(default_factory=dict)

    def prune(self, value: Any, skip: Sequence[str] = ()) -> None:
        """Drops, in place, the ``None`` entries this plan names (a row or a list of rows)."""
        if isinstance(value, list):
            for item in value:
                self.prune(item, skip)
            return
        if not isinstance(value, dict):
            return
        for name in self.fields:
            if name in value and value[name] is None and name not in skip:
                del value[name]
        for name, plan in self.nested.items():
            if name in value and name not in skip:
                plan.prune(value[name])


def plan_of(model: type[BaseModel], seen: dict[type, Plan] | None = None) -> Plan:
    """The plan of ``model``: its ``None``-default fields and those of the models it holds."""
    seen = {} if seen is None else seen
    if issubclass(model, RootModel):
        root = model.model_fields["root"].annotation
        if isinstance(root, type) and issubclass(root, BaseModel):
            return plan_of(root, seen)
    if model in seen:  # a self-referencing model shares its plan
        return seen[model]
    plan = seen[model] = Plan()
    plan.fields = frozenset(
        name
        for name, info in model.model_fields.items()
        if not info.is_required() and info.default is None and info.default_factory is None
    )
    for name, info in model.model_fields.items():
        inner = _model_in(info.annotation)
        if inner is not None:
            plan.nested[name] = plan_of(inner, seen)
    return plan


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The one model a field holds, directly, in a list, or optional; else ``None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _model_in(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        found = {m for m in map(_model_in, typing.get_args(annotation)) if m is not None}
        return found.pop() if len(found) == 1 else None
    if origin in (list, tuple, set, frozenset, Sequence):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return _model_in(args[0]) if len(args) == 1 else None
    return None
