"""The wire format from a client's side: reading results back, and the neutralization rule.

``parse(content)`` splits any tool result's text into its parts; ``neutralize`` and
``neutralize_json`` are SPEC §7's rule for text and JSON; ``fence`` is SPEC §4.2's.
"""

from __future__ import annotations

from mcpfusion._wire.format import RESERVED_TAGS, fence, neutralize, neutralize_json
from mcpfusion._wire.parse import ParsedResponse, parse, parse_error, parse_ui_block

__all__ = [
    "RESERVED_TAGS",
    "ParsedResponse",
    "fence",
    "neutralize",
    "neutralize_json",
    "parse",
    "parse_error",
    "parse_ui_block",
]
