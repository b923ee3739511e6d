"""Tool results whose content tries to run script, for the renderer's suites.

Every payload pushes to ``window.__executed``, so a test that sets it to ``[]`` sees any
that ran.
"""

from __future__ import annotations

from typing import Any

from mcpfusion import response, tool_error, ui

IMG = "<img src=x onerror=window.__executed.push('img')>"
SCRIPT = "</script><script>window.__executed.push('script')</script>"
SVG = "<svg onload=window.__executed.push('svg')>"
LINK_TEXT = "click me"
FUNCTION = "function(){window.__executed.push('label')}"


def hostile_result() -> dict[str, Any]:
    """A table, markdown and a chart carrying the usual XSS payloads, as a client gets them."""
    built = response({"name": IMG}).ui(
        ui.table(["Customer"], [[IMG], [SCRIPT]], title="Customers"),
        ui.markdown(
            f"Customer {IMG}\n\n[{LINK_TEXT}](javascript:window.__executed.push('link'))\n\n{SVG}"
        ),
        ui.echarts(
            {
                "title": {"text": "t", "link": "javascript:window.__executed.push('title')"},
                "tooltip": {"formatter": "<img src=x onerror=window.__executed.push('tip')>"},
                "xAxis": {"type": "category", "data": ["a"]},
                "yAxis": {"type": "value"},
                "series": [
                    {"type": "bar", "data": [3], "label": {"show": True, "formatter": FUNCTION}}
                ],
            }
        ),
        ui.code_block("html", SCRIPT),
    )
    return built.build().to_mcp()


def hostile_diagram() -> dict[str, Any]:
    """A mermaid diagram whose label holds markup and whose node asks for a click callback."""
    diagram = (
        f'graph LR\n  A["{IMG}"] --> B["plain"]\n  click A call window.__executed.push(\'click\')'
    )
    return response("x").ui(ui.mermaid(diagram)).build().to_mcp()


def hostile_error() -> dict[str, Any]:
    """A tool error whose message and detail hold markup."""
    return tool_error(
        "NOT_FOUND", f"Customer {IMG} does not exist.", details={"name": SVG}
    ).to_mcp()
