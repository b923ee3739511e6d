"""Presenting another framework's tool function: SPEC §13's wrapping rule and errors around it.

The integrations (``mcpfusion.integrations.fastmcp`` and ``.sdk``) give this module the
host's result type and context class; nothing here imports a host or the MCP SDK.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, Final

from mcpfusion._errors import (
    DefinitionError,
    OutputMismatchError,
    PresenterError,
    SerializationError,
    ToolError,
)
from mcpfusion._present.failures import from_exception
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse
from mcpfusion._tools.wrapping import present_off_loop, wrap

CONTAINED: Final = (ToolError, PresenterError, SerializationError, OutputMismatchError)
"""The failures a presented function sends as envelopes; anything else is the host's."""

Send = Callable[[ToolResponse], Any]
"""Turns a response into the host's result value (an SDK ``CallToolResult``)."""


def adopt(
    fn: Callable[..., Any],
    presenter: Presenter | None,
    *,
    result_type: type,
    send: Send,
    context_type: type | None,
) -> Callable[..., Any]:
    """A function with ``fn``'s parameters that returns ``send(response)``.

    The response is ``fn``'s value through SPEC §13's wrapping rule (a ``ToolResponse``
    untouched, a builder built, ``None`` as OK, else the Presenter, else ``success``); a
    ``ToolError`` becomes its envelope, a Presenter or serialization failure
    ``PRESENTER_ERROR``/``INTERNAL_ERROR``, exactly as an mcpfusion app sends them.
    The visible return annotation is ``result_type``, so a host that derives an output
    schema from it derives none. Presenter callbacks receive the argument of the
    parameter annotated ``context_type`` (the host's context), else ``None``.

    Raises:
        DefinitionError: if ``presenter`` is not a Presenter, ``fn`` is not a function,
            or its type hints cannot be resolved.
    """
    if presenter is not None and not isinstance(presenter, Presenter):
        raise DefinitionError(f"presented() takes a Presenter or None; got {presenter!r}")
    if not inspect.isfunction(fn) and not inspect.ismethod(fn):
        raise DefinitionError(f"presented() decorates a function; got {fn!r}")
    name: str = fn.__name__
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # NameError and friends from unresolvable string annotations
        raise DefinitionError(
            f"presented(): cannot resolve the type hints of '{name}' ({exc}); define the "
            "types it names at module level"
        ) from exc
    parameters = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
    ]
    visible = signature.replace(parameters=parameters, return_annotation=result_type)
    context_of = _context_reader(visible, context_type)

    if inspect.iscoroutinefunction(fn):

        async def presented_async(*args: Any, **kwargs: Any) -> Any:
            try:
                value = await fn(*args, **kwargs)
                response = await present_off_loop(value, presenter, context_of(args, kwargs))
            except CONTAINED as exc:
                response = from_exception(exc, name)
            return send(response)

        wrapper: Callable[..., Any] = presented_async
    else:

        def presented_sync(*args: Any, **kwargs: Any) -> Any:
            # A host runs a sync tool in a worker thread: presenting there is off the loop.
            try:
                response = wrap(fn(*args, **kwargs), presenter, context_of(args, kwargs))
            except CONTAINED as exc:
                response = from_exception(exc, name)
            return send(response)

        wrapper = presented_sync
    functools.update_wrapper(wrapper, fn)
    # The host reads the signature and hints below, never the original's return type.
    del wrapper.__wrapped__  # type: ignore[attr-defined]
    wrapper.__signature__ = visible  # type: ignore[attr-defined]
    wrapper.__annotations__ = {
        **{p.name: p.annotation for p in parameters if p.annotation is not p.empty},
        "return": result_type,
    }
    return wrapper


def _context_reader(
    signature: inspect.Signature, context_type: type | None
) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    """Reads the host context argument of a call, or ``None`` when ``fn`` takes none."""
    found = None
    if context_type is not None:
        found = next(
            (p.name for p in signature.parameters.values() if _is_a(p.annotation, context_type)),
            None,
        )
    if found is None:
        return lambda args, kwargs: None
    param: str = found

    def read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if param in kwargs:
            return kwargs[param]
        return signature.bind_partial(*args, **kwargs).arguments.get(param)

    return read


def _is_a(annotation: Any, kind: type) -> bool:
    """Whether ``annotation`` is ``kind``, a subclass, or a union or ``Annotated`` holding one."""
    if isinstance(annotation, type):
        return issubclass(annotation, kind)
    return any(_is_a(arg, kind) for arg in typing.get_args(annotation))
