"""The 2026-07-28 requests a hot path answers as the SDK would: era and envelope rules.

At 2026-07-28 there is no handshake: every request carries its protocol version, client
info and capabilities in ``params._meta`` (the envelope), and the SDK builds a connection
from it per request (``mcp.server.runner.serve_dual_era_loop``). A hot path takes such a
request only when the SDK would serve it exactly as a 2025 one: an envelope with nothing
beyond those keys (and a progress token), a supported version, capabilities that declare
nothing the server could ask the client (a handler then finds no such client on either
path, and logs go nowhere without the request's opt-in), all of which the SDK accepts.
Each distinct envelope is checked by the SDK's own models once per session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pydantic_core
from mcp import types
from mcp.types import methods
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.jsonrpc import RequestId, encode
from mcpfusion._serve.rounds import missing_capability
from mcpfusion._tools.client import ClientLacks, Feature, LogLevel

__all__ = [
    "MODERN_ERA",
    "TAKEN_META",
    "Envelopes",
    "ModernClient",
    "client_name_of",
    "lacking",
    "opens_modern",
]

MODERN_ERA: Final = "2026-07-28 era"
"""A session's version for the hot paths once its first request opened it at 2026-07-28:
no version is negotiated then, each request names its own."""

_ENVELOPE_KEYS: Final = frozenset(
    {PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY}
)
TAKEN_META: Final = _ENVELOPE_KEYS | {"progressToken"}
"""The ``_meta`` keys of a 2026-07-28 request a hot path may take."""
_ASKABLE: Final = frozenset({"elicitation", "sampling", "roots"})
_REMEMBERED: Final = 8
"""Envelopes remembered as valid per session: a client sends the same one every time."""


def client_name_of(meta: Mapping[str, Any] | None) -> str | None:
    """The ``clientInfo.name`` of a 2026-07-28 request's envelope: the name the SDK's
    path reads from the connection it makes of that envelope (``client_params``)."""
    info = meta.get(CLIENT_INFO_META_KEY) if meta is not None else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else None


def opens_modern(method: Any, params: Any) -> bool:
    """Whether a session's first request opens it at 2026-07-28, as the SDK decides it.

    Any request but ``initialize`` whose ``_meta`` holds the protocol-version key
    (``mcp.server.runner._has_modern_envelope``); anything else opens a 2025 session.
    """
    if method == "initialize" or not params or not isinstance(params, Mapping):
        return False
    meta = params.get("_meta")
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta


class Envelopes:
    """The envelopes of one session's requests, each checked by the SDK's models once."""

    def __init__(self) -> None:
        self._valid: list[bytes] = []  # the JSON of each, most recent first

    def version_of(self, meta: Mapping[str, Any]) -> str | None:
        """The protocol version of a request whose ``_meta`` a hot path may serve, else
        ``None`` (the SDK's to answer).

        ``meta`` holds the envelope and at most a progress token (checked by the caller).
        """
        if not meta.keys() <= TAKEN_META:
            return None
        version = meta.get(PROTOCOL_VERSION_META_KEY)
        if type(version) is not str or version not in MODERN_PROTOCOL_VERSIONS:
            return None
        capabilities = meta.get(CLIENT_CAPABILITIES_META_KEY)
        if type(capabilities) is not dict or capabilities.keys() & _ASKABLE:
            return None
        envelope = {key: meta[key] for key in _ENVELOPE_KEYS if key in meta}
        # Its JSON, not the dict, is compared: 1 == True would let a value the SDK's models
        # read otherwise pass for one checked already.
        seen = encode(envelope)
        if seen in self._valid:
            return version
        if not _accepted(envelope, version):
            return None
        self._valid = [seen, *self._valid[: _REMEMBERED - 1]]
        return version


def _accepted(envelope: dict[str, Any], version: str) -> bool:
    """Whether the SDK takes ``envelope`` whole: the request surface and the connection's
    typed view of it (a value it would degrade to "not supplied" is left to it too)."""
    try:
        methods.validate_client_request("tools/call", version, {"name": "-", "_meta": envelope})
        types.ClientCapabilities.model_validate(
            envelope[CLIENT_CAPABILITIES_META_KEY], by_name=False
        )
        if CLIENT_INFO_META_KEY in envelope:
            types.Implementation.model_validate(envelope[CLIENT_INFO_META_KEY], by_name=False)
    except (ValidationError, ValueError, KeyError, pydantic_core.PydanticSerializationError):
        return False
    return True


def lacking(request_id: RequestId, lack: ClientLacks) -> bytes:
    """The SDK's error line refusing a call that needs a capability the client lacks:
    ``missing_capability``'s ``-32021``, as the SDK's dispatcher writes it."""
    error = missing_capability(lack).error.model_dump(by_alias=True, mode="json", exclude_none=True)
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


class ModernClient(Channel):
    """The client of a 2026-07-28 call a hot path takes: one it can neither ask nor log to.

    A hot path takes no request whose envelope declares elicitation, sampling or roots
    (``Envelopes``), nor one opting in to log messages; a call needing a feature the client
    lacks is refused with ``-32021`` (``protocol_refusals``), as on the SDK's path. Both hot
    paths, stdio's and HTTP's, serve their 2026-07-28 calls this one client.
    """

    protocol_refusals = True

    def supports(self, feature: Feature) -> bool:
        return False

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Sends nothing: the request did not opt in to log messages."""

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        raise AssertionError("a hot path serves no 2026-07-28 client that can be asked")
