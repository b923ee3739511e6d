"""2026-07-28 on the hot paths: which era a session opens, which envelopes may be taken."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion._serve import modern
from mcpfusion._serve.modern import Envelopes, opens_modern
from tests.stdio_session import ENVELOPE, MODERN

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@pytest.mark.parametrize(
    ("method", "params", "opens"),
    [
        ("server/discover", {"_meta": ENVELOPE}, True),
        ("tools/call", {"name": "t", "_meta": {VERSION: "2099-01-01"}}, True),  # refused later
        ("initialize", {"_meta": ENVELOPE}, False),  # the handshake, whatever it carries
        ("tools/call", {"name": "t", "_meta": {"progressToken": 1}}, False),
        ("tools/call", None, False),
        ("tools/call", {"_meta": "x"}, False),
    ],
)
def test_the_first_request_opens_the_era_the_sdk_opens(
    method: str, params: Any, opens: bool
) -> None:
    """A request with the version key in _meta opens 2026-07-28, unless it is initialize."""
    assert opens_modern(method, params) is opens


def test_each_distinct_envelope_is_checked_by_the_sdks_models_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same envelope again costs no validation; a new one, or a progress token, is seen."""
    checked: list[dict[str, Any]] = []
    accepted = modern._accepted

    def counting(envelope: dict[str, Any], version: str) -> bool:
        checked.append(envelope)
        return accepted(envelope, version)

    monkeypatch.setattr(modern, "_accepted", counting)
    envelopes = Envelopes()
    assert envelopes.version_of(ENVELOPE) == MODERN
    assert envelopes.version_of({**ENVELOPE, "progressToken": 3}) == MODERN
    assert envelopes.version_of(dict(ENVELOPE)) == MODERN
    assert len(checked) == 1
    assert envelopes.version_of({**ENVELOPE, CAPABILITIES: {"experimental": {}}}) == MODERN
    assert len(checked) == 2


@pytest.mark.parametrize(
    "meta",
    [
        {**ENVELOPE, CAPABILITIES: {"elicitation": {}}},
        {**ENVELOPE, VERSION: "2025-11-25"},
        {**ENVELOPE, "io.modelcontextprotocol/logLevel": "info"},
        {k: v for k, v in ENVELOPE.items() if k != CAPABILITIES},
        {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": 1}},
    ],
)
def test_envelopes_the_sdk_serves_otherwise_are_left_to_it(meta: dict[str, Any]) -> None:
    """Askable capabilities, another version, a log opt-in, no capabilities, bad client info."""
    assert Envelopes().version_of(meta) is None
