"""Middleware around every call, and the ones mcpfusion ships.

from mcpfusion.middleware import Call, Next, audit_log, rate_limit

app.middleware(audit_log())
app.middleware(rate_limit(rate=5, burst=20))

@app.middleware
async def tenant(call: Call, call_next: Next) -> ToolResponse:
    if call.identity is not None:
        call.identity = call.identity.with_tenant(call.identity.claims.get("org"))
    return await call_next(call)
"""

from mcpfusion._app.audit import AUDIT_LOGGER, audit_log, audit_record, error_code
from mcpfusion._app.middleware import Call, Middleware, Next
from mcpfusion._app.ratelimit import MemoryRateLimitStore, RateLimitStore, by_identity, rate_limit
from mcpfusion._app.tracing import tracing

__all__ = [
    "AUDIT_LOGGER",
    "Call",
    "MemoryRateLimitStore",
    "Middleware",
    "Next",
    "RateLimitStore",
    "audit_log",
    "audit_record",
    "by_identity",
    "error_code",
    "rate_limit",
    "tracing",
]
