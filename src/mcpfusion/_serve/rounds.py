"""A 2026-07-28 call's questions, asked across rounds: ``input_required`` and the state.

Protocol 2026-07-28 has no back-channel: a question ends the call with an
``input_required`` result, the client answers and calls again with the answers and the
``requestState`` it was given (sealed by the SDK's ``RequestStateBoundary``), and the
handler runs again from the start, finding its earlier questions answered here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import ValidationError

from mcpfusion._serve.channel import R
from mcpfusion._tools.client import ClientLacks, InputNeeded
from mcpfusion._tools.client_needs import CONFIRM_PREFIX

__all__ = ["Rounds", "input_required", "missing_capability"]


class Rounds:
    """The questions of one 2026-07-28 call, asked in order across rounds.

    The n-th question of a run is ``q{n}``. Its answer is recorded in the state handed
    back with the next question, with a digest of the question: a run that asks
    something else in that place is asked again rather than given a stale answer. The
    state also counts the log messages sent, so a run does not send its earlier rounds'
    messages twice.
    """

    def __init__(self, params: types.InputResponseRequestParams) -> None:
        self._answers = params.input_responses or {}
        self._recorded: dict[str, dict[str, Any]] = _decoded(params.request_state)
        self._asked = 0
        self._pending: dict[str, dict[str, Any]] = {}  # asked this round, not answered
        sent = self._recorded.pop("logs", {}).get("n", 0)
        self._logs_sent = sent if isinstance(sent, int) else 0
        self._logged = 0

    def first_time_logged(self) -> bool:
        """Counts a log message; whether no earlier round of the call sent it."""
        self._logged += 1
        return self._logged > self._logs_sent

    def ask(self, request: types.ServerRequest, kind: type[R], key: str | None = None) -> R:
        """The answer to ``request``, known from an earlier round or sent with this one.

        An answer is taken when it is for this very question, or when no question was
        recorded under its key (a client may answer before being asked: it could answer
        anything it is asked anyway). A confirmation is the exception (fails closed): its
        answer counts only for the very question this server asked, as the sealed
        ``requestState`` records it, never unsolicited.

        Raises:
            InputNeeded: when the client has not answered yet.
        """
        if key is None:
            key = f"q{self._asked}"
        self._asked += 1
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        digest = hashlib.sha256(json.dumps(wire, sort_keys=True).encode()).hexdigest()[:32]
        recorded = self._recorded.get(key)
        if recorded is not None and recorded.get("q") == digest:
            return kind.model_validate(recorded["a"])
        answer = self._answers.get(key)
        asked = self._recorded.get(f"asked:{key}")
        unasked_ok = asked is None and not key.startswith(CONFIRM_PREFIX)
        if answer is not None and (unasked_ok or (asked is not None and asked.get("q") == digest)):
            try:
                result = kind.model_validate(answer.model_dump(by_alias=True, mode="json"))
            except ValidationError:
                result = None
            if result is not None:
                sent = answer.model_dump(by_alias=True, mode="json")
                self._recorded[key] = {"q": digest, "a": sent}
                return result
        self._pending[f"asked:{key}"] = {"q": digest}
        state = {k: v for k, v in self._recorded.items() if not k.startswith("asked:")}
        state.update(self._pending)
        state["logs"] = {"n": max(self._logged, self._logs_sent)}
        raise InputNeeded({key: wire}, json.dumps(state, sort_keys=True))


def _decoded(state: str | None) -> dict[str, dict[str, Any]]:
    """The recorded answers in a ``requestState`` the boundary verified (plaintext here)."""
    if not state:
        return {}
    try:
        found = json.loads(state)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def input_required(need: InputNeeded) -> types.InputRequiredResult:
    """The ``input_required`` result asking what a handler's question needs."""
    return types.InputRequiredResult.model_validate(
        {"inputRequests": dict(need.requests), "requestState": need.state}
    )


def missing_capability(lack: ClientLacks) -> MCPError:
    """The JSON-RPC error ``-32021`` naming the capability a call needs (SEP-2575)."""
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"This tool requires the client '{lack.feature}' capability",
        data={"requiredCapabilities": {lack.feature: {}}},
    )
