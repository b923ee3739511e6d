"""The audit log middleware: one structured record per call to the ``mcpfusion.audit`` logger."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any

from mcpfusion._app.middleware import Call, Middleware, Next, contained
from mcpfusion._present.response import ToolResponse
from mcpfusion._wire.parse import parse_error

AUDIT_LOGGER = "mcpfusion.audit"

_logger = logging.getLogger("mcpfusion")

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
    """A middleware writing one record per request: who, what, outcome, error code, duration.

    The record is the log record's ``audit`` attribute (a dict, for a JSON formatter)
    and its message a one-line summary. Argument values are recorded only for the
    parameters the action marks ``loggable=``; arguments can carry personal data. Add it
    first, so that it sees what every later middleware decides (a rate limit's refusal).
    A record that cannot be written (a failing filter) is reported on the ``mcpfusion``
    logger; the call's result still goes out.

    Record fields: ``subject``, ``client_id``, ``tenant`` (``None`` when anonymous),
    ``kind`` (``tools/call``, ``resources/read``, ``prompts/get`` or
    ``completion/complete``), ``tool`` and ``action`` (a resource's or prompt's name and
    ``read``, ``get`` or ``complete``), ``outcome`` (``ok``, ``error`` or ``refused`` for a call the
    framework refused before its handler), ``code`` (the error code or ``None``),
    ``duration_ms`` and ``arguments``.
    """
    log = logging.getLogger(logger) if isinstance(logger, str) else logger
    fixed = _fixed_fields(log.name, level)

    async def audit(call: Call, call_next: Next) -> ToolResponse:
        started = time.perf_counter()
        response = await call_next(call)
        if log.isEnabledFor(level):
            try:
                record = audit_record(call, response, time.perf_counter() - started)
                code = record["code"]
                args = (
                    record["subject"] or "anonymous",
                    call.tool,
                    call.action,
                    record["outcome"],
                    f" {code}" if code else "",
                    record["duration_ms"],
                )
                log.handle(AuditRecord(fixed, args, record))
            except Exception:
                _logger.exception("the audit record of %s/%s failed", call.tool, call.action)
        return response

    return contained(audit)


def _fixed_fields(name: str, level: int) -> dict[str, Any]:
    """The attributes of a logger's audit records that are the same in every record."""
    return {
        "name": name,
        "msg": _SUMMARY,
        "levelname": logging.getLevelName(level),
        "levelno": level,
        "pathname": __file__,
        "filename": _FILENAME,
        "module": _MODULE,
        "exc_info": None,
        "exc_text": None,
        "stack_info": None,
        "lineno": 0,
        "funcName": "audit",
    }


_process: tuple[int, str] | None = None
"""This process's id and ``multiprocessing`` name, read at its first record."""


def _forget_process() -> None:
    global _process
    _process = None


os.register_at_fork(after_in_child=_forget_process)


def _process_fields() -> tuple[int, str]:
    global _process
    if _process is None:
        processes = sys.modules.get("multiprocessing")
        name = processes.current_process().name if processes else "MainProcess"
        _process = (os.getpid(), name)
    return _process


class AuditRecord(logging.LogRecord):
    """The log record of one call: the summary, and the structured record as ``audit``.

    Made directly rather than through ``Logger.log``, which would look for the caller's
    frame (always the middleware) and rebuild what is known already: the stock path costs
    several times the record's content (``benchmarks/call.py``). Every attribute a
    formatter reads is set, in one dict: the fixed ones copied, the process's id and name
    read once per process (a system call and two lookups, 0.4 µs a record).
    """

    def __init__(self, fixed: dict[str, Any], args: tuple[Any, ...], audit: dict[str, Any]):
        now = _time_ns()
        fields = fixed.copy()
        fields["args"] = args
        fields["created"] = now / 1e9
        fields["msecs"] = float((now % 1_000_000_000) // 1_000_000)
        fields["relativeCreated"] = (now - _STARTED) / 1e6
        fields["thread"] = _thread_id()
        fields["threadName"] = _current_thread().name
        fields["process"], fields["processName"] = _process or _process_fields()
        fields["audit"] = audit
        self.__dict__ = fields


# Bound once: a record reads each at module scope (0.3 µs a record of lookups otherwise).
_time_ns = time.time_ns
_thread_id = threading.get_ident
_current_thread = threading.current_thread


def audit_record(call: Call, response: ToolResponse, seconds: float) -> dict[str, Any]:
    """The structured record of one call."""
    identity = call.identity
    failed = response.is_error
    loggable = call.loggable
    arguments = call.arguments
    return {
        "subject": identity.subject if identity else None,
        "client_id": identity.client_id if identity else None,
        "tenant": identity.tenant if identity else None,
        "kind": call.kind,
        "tool": call.tool,
        "action": call.action,
        "outcome": "refused" if call.rejected else "error" if failed else "ok",
        "code": error_code(response) if failed else None,
        "duration_ms": int(seconds * 1_000_000) / 1000,  # to the microsecond
        "arguments": {name: arguments[name] for name in loggable if name in arguments}
        if loggable
        else {},
    }
