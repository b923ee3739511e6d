"""The audit log middleware: one structured record per call to the ``mcpfusion.audit`` logger."""

from __future__ import annotations

import logging
import time
from typing import Any

from mcpfusion._middleware import Call, Middleware, Next
from mcpfusion._parse import parse_error
from mcpfusion._response import ToolResponse

AUDIT_LOGGER = "mcpfusion.audit"

_SUMMARY = "%s called %s/%s: %s%s in %.1f ms"


def error_code(response: ToolResponse) -> str | None:
    """The code of an error (or warning) result, else ``None``."""
    blocks = response.blocks
    if not blocks or not blocks[0].startswith(("<tool_error ", "<validation_error ")):
        return None
    envelope = parse_error(blocks[0])
    return envelope.code if envelope is not None else None


def audit_log(logger: logging.Logger | str = AUDIT_LOGGER, level: int = logging.INFO) -> Middleware:
    """A middleware writing one record per call: who, what, outcome, error code, duration.

    The record is the log record's ``audit`` attribute (a dict, for a JSON formatter)
    and its message a one-line summary. Argument values are recorded only for the
    parameters the action marks ``loggable=``; arguments can carry personal data. Add it
    first, so that it sees what every later middleware decides (a rate limit's refusal).

    Record fields: ``subject``, ``client_id``, ``tenant`` (``None`` when anonymous),
    ``tool``, ``action``, ``outcome`` (``ok``, ``error`` or ``refused`` for a call the
    framework refused before its handler), ``code`` (the error code or ``None``),
    ``duration_ms`` and ``arguments``.
    """
    log = logging.getLogger(logger) if isinstance(logger, str) else logger

    async def audit(call: Call, call_next: Next) -> ToolResponse:
        started = time.perf_counter()
        response = await call_next(call)
        if log.isEnabledFor(level):
            record = audit_record(call, response, time.perf_counter() - started)
            code = f" {record['code']}" if record["code"] else ""
            args = (
                record["subject"] or "anonymous",
                call.tool,
                call.action,
                record["outcome"],
                code,
                record["duration_ms"],
            )
            # A record handed over, not log(): the caller's frame would always be this
            # function, and finding it is half the cost of the record (benchmarks/call.py).
            entry = logging.LogRecord(log.name, level, __file__, 0, _SUMMARY, args, None)
            entry.audit = record
            log.handle(entry)
        return response

    return audit


def audit_record(call: Call, response: ToolResponse, seconds: float) -> dict[str, Any]:
    """The structured record of one call."""
    identity = call.identity
    return {
        "subject": identity.subject if identity else None,
        "client_id": identity.client_id if identity else None,
        "tenant": identity.tenant if identity else None,
        "tool": call.tool,
        "action": call.action,
        "outcome": "refused" if call.rejected else "error" if response.is_error else "ok",
        "code": error_code(response) if response.is_error else None,
        "duration_ms": round(seconds * 1000, 3),
        "arguments": {
            name: call.arguments[name] for name in call.loggable if name in call.arguments
        },
    }
