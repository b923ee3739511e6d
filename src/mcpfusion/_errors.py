"""The exception tree, the framework's error codes and the error envelope value.

    FusionError (code)          every error mcpfusion raises
    ├── DefinitionError         a tool, action, Presenter, option or UI block defined wrongly
    ├── SerializationError      a value the data block cannot serialize       INTERNAL_ERROR
    ├── OutputMismatchError     a value that does not fit its output schema   INTERNAL_ERROR
    ├── PresenterError          data that does not fit a Presenter schema     PRESENTER_ERROR
    └── ToolError               an expected failure a handler reports         (its own code)

Definition errors raise where the definition is written. The others become ``isError``
results on the call path (``code`` is the envelope's code); none of them ever carries a
traceback to the wire. ``ErrorEnvelope`` is what the model reads when a call fails
(SPEC §9): ``ToolError`` carries one, ``tool_error()`` sends one, the wire format renders
one and the parser reads one back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Final, Literal, get_args

FrameworkCode = Literal[
    "BUSY",
    "ERROR",
    "FORBIDDEN",
    "INTERNAL_ERROR",
    "INVALID_ANSWER",
    "INVALID_CURSOR",
    "MISSING_DISCRIMINATOR",
    "MISSING_REQUIRED_FIELD",
    "NOT_CONFIRMED",
    "OUT_OF_STATE",
    "PRESENTER_ERROR",
    "RATE_LIMITED",
    "TIMEOUT",
    "TOO_LARGE",
    "UNKNOWN_ACTION",
    "UNKNOWN_TOOL",
    "UNSUPPORTED_BY_CLIENT",
    "VALIDATION_ERROR",
]
"""The codes the framework itself sends (SPEC §9); handlers may use any other code."""

FRAMEWORK_CODES: Final[tuple[FrameworkCode, ...]] = get_args(FrameworkCode)

Severity = Literal["warning", "error", "critical"]
"""How bad a failure is; a ``warning`` is sent with ``isError: false``."""

SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)

TEXT_LIMIT: Final = 2_000
"""An envelope's message and recovery are cut to this many characters."""
DETAIL_LIMIT: Final = 500
"""A detail value is cut to this many characters."""
NAME_LIMIT: Final = 128
"""An action name or a detail key is cut to this many characters."""
CODE_LIMIT: Final = 64
"""An error code is cut to this many characters."""
LIST_LIMIT: Final = 50
"""At most this many available actions, and this many details, are sent."""


def _text(value: str, limit: int) -> str:
    """``value`` as an exact str, cut to ``limit`` characters ending in ``…``."""
    text = str.__str__(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(value: object) -> str:
    """A detail's text: plain scalars as written, anything else by its type only.

    ``str()`` of an arbitrary object can carry its repr, a memory address or, for an
    ``OSError``, a file path; none of that reaches the wire.
    """
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return int.__repr__(value) if value.bit_length() < 10_000 else "a very large integer"
    if isinstance(value, float):
        return float.__repr__(value)
    return f"a {type(value).__name__} value"


@dataclass(frozen=True, slots=True)
class ErrorEnvelope:
    """The ``<tool_error>`` envelope of SPEC §9 as a value, checked when it is made.

    Every field lands inside markup, so each is type-checked here, once: a wrong type can
    neither crash the call path later nor, for ``retry_after``, be interpolated raw.

    Attributes:
        code: a stable, machine-readable code such as ``NOT_FOUND``.
        message: what went wrong, for the model.
        severity: ``warning``, ``error`` (default) or ``critical``.
        recovery: what to do about it.
        available_actions: tool or action names the model may call instead.
        details: extra ``key: value`` facts.
        retry_after: seconds to wait before retrying.

    Raises:
        TypeError: if a field has the wrong type.
        ValueError: on an empty code, an unknown severity or a negative ``retry_after``.
    """

    code: str
    message: str
    _: KW_ONLY
    severity: Severity = "error"
    recovery: str | None = None
    available_actions: Sequence[str] = ()
    details: Mapping[str, object] | None = None
    retry_after: int | None = None

    def __post_init__(self) -> None:
        # Every text becomes an exact str (a subclass could override the methods escaping
        # relies on) cut at its limit (a handler may echo a 100 MB argument).
        set_ = object.__setattr__
        if not isinstance(self.code, str):
            raise TypeError(f"an error code is a str; got {type(self.code).__name__}")
        if not self.code:
            raise ValueError("an error code cannot be empty")
        set_(self, "code", _text(self.code, CODE_LIMIT))
        if not isinstance(self.message, str):
            raise TypeError(f"an error message is a str; got {type(self.message).__name__}")
        set_(self, "message", _text(self.message, TEXT_LIMIT))
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"severity must be one of {', '.join(SEVERITIES)}; got {self.severity!r}"
            )
        if self.recovery is not None:
            if not isinstance(self.recovery, str):
                raise TypeError(f"a recovery text is a str; got {type(self.recovery).__name__}")
            set_(self, "recovery", _text(self.recovery, TEXT_LIMIT))
        actions: Any = self.available_actions
        if isinstance(actions, str):  # would become one action per letter
            raise TypeError("available_actions is a sequence of str, not a str")
        actions = tuple(actions)  # a generator is read once
        if not all(isinstance(action, str) for action in actions):
            raise TypeError("available_actions is a sequence of str")
        set_(self, "available_actions", tuple(_text(a, NAME_LIMIT) for a in actions[:LIST_LIMIT]))
        if self.details is not None:
            if not isinstance(self.details, Mapping):
                raise TypeError(f"details is a mapping; got {type(self.details).__name__}")
            texts = {
                _text(_plain(key), NAME_LIMIT): _text(_plain(value), DETAIL_LIMIT)
                for key, value in list(self.details.items())[:LIST_LIMIT]
            }
            set_(self, "details", texts or None)
        retry = self.retry_after
        if retry is not None:
            if isinstance(retry, bool) or not isinstance(retry, int):
                raise TypeError(f"retry_after is a whole number of seconds; got {retry!r}")
            if retry < 0:
                raise ValueError(f"retry_after cannot be negative; got {retry}")
            set_(self, "retry_after", int.__int__(retry))  # a plain int formats plainly

    @property
    def is_error(self) -> bool:
        """Whether the result carrying it has ``isError`` set (all but warnings)."""
        return self.severity != "warning"


class FusionError(Exception):
    """Base class of every mcpfusion error.

    ``code`` is the stable code of the error envelope this failure is reported with when
    it escapes a handler.
    """

    code: ClassVar[str] = "INTERNAL_ERROR"


class DefinitionError(FusionError, ValueError):
    """A tool, action, Presenter or option was defined wrongly; raised at definition time."""


class SerializationError(FusionError):
    """A handler returned a value the data block cannot serialize (a server defect)."""


class OutputMismatchError(FusionError):
    """A handler's value does not fit its action's output schema (a server defect)."""


class PresenterError(FusionError):
    """Data handed to a Presenter does not fit its schema (a server defect).

    Attributes:
        presenter: the Presenter's name.
        index: the item index in a collection, or ``None`` for a single object.
        path: the dotted field path inside the item.
        reason: what is wrong, as pydantic reports it.
    """

    code = "PRESENTER_ERROR"

    def __init__(
        self, presenter: str, index: int | None, path: str, reason: str, *, callback: bool = False
    ) -> None:
        self.presenter = presenter
        self.index = index
        self.path = path
        self.reason = reason
        if callback:
            super().__init__(f"Presenter '{presenter}' failed: {reason}")
            return
        where = f"item {index}" if index is not None else "the object"
        field_ = f", field '{path}'" if path else ""
        super().__init__(f"Presenter '{presenter}' rejected {where}{field_}: {reason}")

    @classmethod
    def callback_failed(cls, presenter: str, exc: Exception) -> PresenterError:
        """The error for a Presenter callback that raised ``exc`` (named by type only)."""
        return cls(presenter, None, "", f"a callback raised {type(exc).__name__}", callback=True)


class ToolError(FusionError):
    """An expected failure a handler raises; it is sent as its ``envelope``.

    Example:
        raise ToolError("NOT_FOUND", "Invoice INV-9 does not exist.",
                        recovery="List invoices to find a valid id.")

    Raises:
        TypeError, ValueError: if the envelope's fields are malformed (see ``ErrorEnvelope``).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        recovery: str | None = None,
        available_actions: Sequence[str] = (),
        details: Mapping[str, object] | None = None,
        retry_after: int | None = None,
        severity: Severity = "error",
    ) -> None:
        super().__init__(message)
        self.envelope = ErrorEnvelope(
            code,
            message,
            severity=severity,
            recovery=recovery,
            available_actions=available_actions,
            details=details,
            retry_after=retry_after,
        )

    @property
    def code(self) -> str:  # type: ignore[override]  # the instance's code, not the class's
        """The envelope's code."""
        return self.envelope.code
