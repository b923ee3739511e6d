"""The exception tree.

    FusionError (code)
    ├── DefinitionError      a tool, action, Presenter or UI block defined wrongly
    ├── SerializationError   a value the data block cannot serialize   INTERNAL_ERROR
    ├── PresenterError       data that does not fit a Presenter schema PRESENTER_ERROR
    └── ToolError            an expected failure a handler reports     (user code)

Definition errors raise where the definition is written. The others are turned into
``isError`` results by the call path; none of them ever carries a traceback to the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar


class FusionError(Exception):
    """Base class of every mcpfusion error; ``code`` is stable and machine-readable."""

    code: ClassVar[str] = "FUSION_ERROR"


class DefinitionError(FusionError, ValueError):
    """A tool, action, Presenter or option was defined wrongly; raised at definition time."""

    code = "DEFINITION_ERROR"


class SerializationError(FusionError):
    """A handler returned a value the data block cannot serialize (a server defect)."""

    code = "INTERNAL_ERROR"


class PresenterError(FusionError):
    """Data handed to a Presenter does not fit its schema (a server defect).

    Attributes:
        presenter: the Presenter's name.
        index: the item index in a collection, or ``None`` for a single object.
        path: the dotted field path inside the item.
        reason: what is wrong, as pydantic reports it.
    """

    code = "PRESENTER_ERROR"

    def __init__(self, presenter: str, index: int | None, path: str, reason: str) -> None:
        self.presenter = presenter
        self.index = index
        self.path = path
        self.reason = reason
        where = f"item {index}" if index is not None else "the object"
        field = f", field '{path}'" if path else ""
        super().__init__(f"Presenter '{presenter}' rejected {where}{field}: {reason}")

    @classmethod
    def callback_failed(cls, presenter: str, exc: Exception) -> PresenterError:
        """The error for a Presenter callback that raised ``exc`` (named by type only)."""
        error = cls(presenter, None, "", f"a callback raised {type(exc).__name__}")
        error.args = (f"Presenter '{presenter}' failed: a callback raised {type(exc).__name__}",)
        return error


class ToolError(FusionError):
    """An expected failure a handler raises; it becomes a ``<tool_error>`` envelope.

    Example:
        raise ToolError("NOT_FOUND", "Invoice INV-9 does not exist.",
                        recovery="List invoices to find a valid id.")
    """

    code = "TOOL_ERROR"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        recovery: str | None = None,
        available_actions: Sequence[str] = (),
        details: Mapping[str, object] | None = None,
        retry_after: int | None = None,
        severity: str = "error",
    ) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # per-instance code shadows the class default
        self.message = message
        self.recovery = recovery
        if isinstance(available_actions, str):  # a str would become one action per letter
            raise TypeError("available_actions is a sequence of str, not a str")
        self.available_actions = tuple(available_actions)
        self.details = dict(details) if details else None
        self.retry_after = retry_after
        self.severity = severity
