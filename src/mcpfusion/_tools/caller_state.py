"""Per-caller state: small JSON values keyed by identity, tenant and conversation, with TTLs."""

from __future__ import annotations

import contextvars
import json
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, overload, runtime_checkable

from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

if TYPE_CHECKING:
    from mcpfusion._identity import Identity

CONVERSATION_META: Final = "io.mcpfusion/conversation"
"""The request ``_meta`` key naming the conversation a call belongs to, when the client
sends one: each conversation of one caller then has its own state."""

CONVERSATION_LIMIT: Final = 200
"""A conversation id longer than this many characters is ignored (the caller's state is
then its identity's alone)."""

DEFAULT_TTL: Final = 86_400.0
"""How long a value lives after it was last written, in seconds, unless ``ttl=`` says."""

VALUE_LIMIT: Final = 65_536
"""The most characters of JSON one value may take."""

NAME_LIMIT: Final = 200
"""The longest name of a value."""

RESERVED_PREFIX: Final = "mcpfusion."
"""Names the framework keeps for itself (the workflow's state)."""

MEMORY_CALLERS: Final = 100_000
"""The in-memory store forgets the least recently written callers beyond this many."""

_T = TypeVar("_T")


@runtime_checkable
class CallerStore(Protocol):
    """Where callers' values live, as JSON text: this process's memory, or Redis."""

    async def get(self, caller: str, name: str) -> str | None:
        """The JSON text of ``caller``'s value ``name``, or ``None`` when unset or expired."""
        ...

    async def put(self, caller: str, name: str, value: str, ttl: float) -> None:
        """Sets ``caller``'s value ``name`` to the JSON text ``value`` for ``ttl`` seconds."""
        ...

    async def remove(self, caller: str, name: str) -> None:
        """Removes ``caller``'s value ``name`` (nothing happens when it is not set)."""
        ...


class MemoryCallerStore:
    """Callers' values in this process's memory (each server process keeps its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # caller -> name -> (expires at, JSON text). A dict keeps insertion order: a
        # caller written to moves to the end, so the first one is the one to forget.
        self._callers: dict[str, dict[str, tuple[float, str]]] = {}

    async def get(self, caller: str, name: str) -> str | None:
        """See ``CallerStore.get``."""
        found = self._callers.get(caller, {}).get(name)
        if found is None:
            return None
        if found[0] <= self._clock():
            await self.remove(caller, name)
            return None
        return found[1]

    async def put(self, caller: str, name: str, value: str, ttl: float) -> None:
        """See ``CallerStore.put``."""
        values = self._callers.pop(caller, {})
        values[name] = (self._clock() + ttl, value)
        self._callers[caller] = values
        if len(self._callers) > MEMORY_CALLERS:
            del self._callers[next(iter(self._callers))]

    async def remove(self, caller: str, name: str) -> None:
        """See ``CallerStore.remove``."""
        values = self._callers.get(caller)
        if values is not None:
            values.pop(name, None)
            if not values:
                del self._callers[caller]


SERVING_CALLER_STORE: contextvars.ContextVar[CallerStore | None] = contextvars.ContextVar(
    "mcpfusion_caller_store", default=None
)
"""The store of the server serving the current request (``HttpOptions.caller_store``)."""

APP_CALLER_STORE: contextvars.ContextVar[CallerStore | None] = contextvars.ContextVar(
    "mcpfusion_app_caller_store", default=None
)
"""The memory store of the app answering the current call, where no server names one."""


def current_store() -> CallerStore:
    """The store of the current call: the server's, else the app's own memory store.

    Raises:
        RuntimeError: outside a tool call of an app.
    """
    store = SERVING_CALLER_STORE.get() or APP_CALLER_STORE.get()
    if store is None:
        raise RuntimeError("caller state is available during a tool call only")
    return store


def identity_key(identity: Identity | None) -> str:
    """Who vouched for the caller, its tenant and its subject, as one key.

    A subject names one caller only within its issuer and tenant: the API key of holder
    ``reader`` (an identity the app configured, without claims), an introspected token
    whose ``sub`` is ``reader`` (claims without ``iss``), a JWT's ``reader`` and the same
    ``sub`` in another tenant each get their own key. Anonymous callers share one.
    """
    if identity is None:
        return "anonymous"
    last = _last_key
    if last[0] is identity:  # an identity is immutable: the same object, the same key
        return last[1]
    claims = identity.claims
    issuer = claims.get("iss")
    if not isinstance(issuer, str):
        issuer = ""
    tenant = identity.tenant
    # Lengths prefix the issuer and the tenant, so no subject or tenant can spell another
    # caller's key (an f-string: repr of a tuple costs twice as much a call).
    key = (
        f"{'token' if claims else 'app'}:{len(issuer)}:{issuer}"
        f":{-1 if tenant is None else len(tenant)}:{tenant or ''}:{identity.subject}"
    )
    _remember_key(identity, key)
    return key


# The last identity keyed and its key: a verifier hands back the same Identity for each
# call of one API key or cached token, and stdio's local identity is one object, so a
# server's next call mostly comes from the caller keyed last (the rate limit keys every
# call). Held strongly, so no other object can take its id; one tuple, swapped whole.
_last_key: tuple[Identity | None, str] = (None, "anonymous")


def _remember_key(identity: Identity, key: str) -> None:
    global _last_key
    _last_key = (identity, key)


def caller_key(identity: Identity | None, meta: Mapping[str, Any]) -> str:
    """The key of a caller's state: its identity's, and its conversation's when sent."""
    key = identity_key(identity)
    conversation = meta.get(CONVERSATION_META)
    if isinstance(conversation, str) and 0 < len(conversation) <= CONVERSATION_LIMIT:
        # The identity's key comes first with its length: a conversation id cannot
        # reach into another caller's state.
        return f"{len(key)}:{key}:{conversation}"
    return f"{len(key)}:{key}"


def _checked_name(name: object, *, reserved: bool = False) -> str:
    if not isinstance(name, str) or not 0 < len(name) <= NAME_LIMIT:
        raise ValueError(f"a caller state name is a str of 1 to {NAME_LIMIT} characters")
    if not reserved and name.startswith(RESERVED_PREFIX):
        raise ValueError(f"caller state names starting '{RESERVED_PREFIX}' are the framework's")
    return name


def _checked_ttl(ttl: float | None) -> float:
    if ttl is None:
        return DEFAULT_TTL
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < math.inf:
        raise ValueError(f"ttl is a positive number of seconds; got {ttl!r}")
    return float(ttl)


class CallerState:
    """The state of the caller of the current call, kept between its calls (``ctx.caller_state``).

    Keyed by the caller's identity and tenant (and conversation, when the client names one
    in ``_meta`` as ``io.mcpfusion/conversation``), so it does not depend on a session: it
    works the same over stdio, stateful and stateless HTTP and MCP 2026-07-28. It lives in
    this process's memory, or in Redis across workers (``--redis-url``). Values are JSON
    (what pydantic can dump), each living ``ttl`` seconds after it was last written.
    """

    __slots__ = ("_key", "_store")

    def __init__(self, store: CallerStore, key: str) -> None:
        self._store = store
        self._key = key

    @property
    def key(self) -> str:
        """The caller's key in the store."""
        return self._key

    @overload
    async def get(self, name: str, default: Any = None) -> Any: ...
    @overload
    async def get(self, name: str, default: Any = None, *, type: type[_T]) -> _T: ...

    async def get(self, name: str, default: Any = None, *, type: Any = None) -> Any:
        """The value ``name``, validated as ``type`` when given; ``default`` when unset.

        Raises:
            ValueError: on a bad name; pydantic's ``ValidationError`` when the stored
                value does not fit ``type``.
        """
        text = await self._store.get(self._key, _checked_name(name, reserved=True))
        if text is None:
            return default
        if type is None:
            return json.loads(text)
        return TypeAdapter(type).validate_json(text)

    async def set(self, name: str, value: Any, *, ttl: float | None = None) -> None:
        """Sets ``name`` to ``value`` (JSON, up to ``VALUE_LIMIT`` characters) for ``ttl``
        seconds (``DEFAULT_TTL`` by default).

        Raises:
            ValueError: on a bad name or ttl, a value JSON cannot carry, or one too large.
        """
        await self._put(_checked_name(name), value, ttl)

    async def delete(self, name: str) -> None:
        """Removes ``name`` (nothing happens when it is not set)."""
        await self._store.remove(self._key, _checked_name(name))

    async def _put(self, name: str, value: Any, ttl: float | None) -> None:
        seconds = _checked_ttl(ttl)
        try:
            text = json.dumps(
                to_jsonable_python(value),
                allow_nan=False,
                ensure_ascii=False,
                separators=(",", ":"),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"caller state '{name}' must be JSON: {exc}") from None
        if len(text) > VALUE_LIMIT:
            raise ValueError(f"caller state '{name}' takes over {VALUE_LIMIT} characters")
        await self._store.put(self._key, name, text, seconds)


def caller_state_of(identity: Identity | None, meta: Mapping[str, Any]) -> CallerState:
    """The state of the caller with ``identity`` sending ``meta``, in the current store."""
    return CallerState(current_store(), caller_key(identity, meta))
