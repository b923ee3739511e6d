"""The tracing middleware: an OpenTelemetry span per call, and one for the Presenter's render."""

from __future__ import annotations

from typing import Any

from mcpfusion._app.audit import error_code
from mcpfusion._app.middleware import Call, Middleware, Next
from mcpfusion._errors import DefinitionError
from mcpfusion._present.response import ToolResponse


def tracing(tracer_provider: Any = None) -> Middleware:
    """A middleware opening an OpenTelemetry span per call, with the render as a child span.

    Served through the MCP SDK, the span is a child of the SDK's own ``tools/call`` server
    span, which carries the client's trace context: one trace from agent to Presenter.
    Spans are named ``{tool}/{action}``, with attributes ``mcpfusion.tool``,
    ``mcpfusion.action``, ``mcpfusion.outcome`` and ``mcpfusion.error_code``. Exporting
    them needs an OpenTelemetry SDK (``pip install 'mcpfusion[otel]'``).

    Args:
        tracer_provider: the provider to take the tracer from (the global one by default).

    Raises:
        DefinitionError: if the OpenTelemetry API is not installed.
    """
    try:
        from opentelemetry import trace
    except ImportError as exc:  # pragma: no cover - the MCP SDK depends on the API
        raise DefinitionError("tracing() needs opentelemetry-api: install mcpfusion[otel]") from exc
    tracer = trace.get_tracer("mcpfusion", tracer_provider=tracer_provider)
    internal, error = trace.SpanKind.INTERNAL, trace.StatusCode.ERROR

    def render_span() -> Any:
        return tracer.start_as_current_span("present", kind=internal)

    async def traced(call: Call, call_next: Next) -> ToolResponse:
        attributes = {"mcpfusion.tool": call.tool, "mcpfusion.action": call.action}
        with tracer.start_as_current_span(
            f"{call.tool}/{call.action}", kind=internal, attributes=attributes
        ) as span:
            call.around_render = render_span
            response = await call_next(call)
            outcome = "refused" if call.rejected else "error" if response.is_error else "ok"
            span.set_attribute("mcpfusion.outcome", outcome)
            if response.is_error:
                code = error_code(response)
                if code is not None:
                    span.set_attribute("mcpfusion.error_code", code)
                span.set_status(error, code)
        return response

    return traced
