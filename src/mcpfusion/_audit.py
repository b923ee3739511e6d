"""The audit log middleware: one structured record per call to the ``mcpfusion.audit`` logger."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any

from mcpfusion._middleware import Call, Middleware, Next
from mcpfusion._parse import parse_error
from mcpfusion._response import ToolResponse

AUDIT_LOGGER = "mcpfusion.audit"

_SUMMARY = "%s called %s/%s: %s%s in %.1f ms"
_FILENAME = os.path.basename(__file__)
_MODULE = os.path.splitext(_FILENAME)[0]
_STARTED = time.time_ns()


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
            log.handle(AuditRecord(log.name, level, args, record))
        return response

    return audit


class AuditRecord(logging.LogRecord):
    """The log record of one call: the summary, and the structured record as ``audit``.

    Made directly rather than through ``Logger.log``, which would look for the caller's
    frame (always the middleware) and rebuild what is known already: the stock path costs
    several times the record's content (``benchmarks/call.py``). Every attribute a
    formatter reads is set.
    """

    def __init__(self, name: str, level: int, args: tuple[Any, ...], audit: dict[str, Any]):
        now = time.time_ns()
        self.name = name
        self.msg = _SUMMARY
        self.args = args
        self.levelname = logging.getLevelName(level)
        self.levelno = level
        self.pathname = __file__
        self.filename = _FILENAME
        self.module = _MODULE
        self.exc_info = None
        self.exc_text = None
        self.stack_info = None
        self.lineno = 0
        self.funcName = "audit"
        self.created = now / 1e9
        self.msecs = float((now % 1_000_000_000) // 1_000_000)
        self.relativeCreated = (now - _STARTED) / 1e6
        self.thread = threading.get_ident()
        self.threadName = threading.current_thread().name
        processes = sys.modules.get("multiprocessing")
        self.processName = processes.current_process().name if processes else "MainProcess"
        self.process = os.getpid()
        self.audit = audit


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
