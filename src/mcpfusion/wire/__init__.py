"""The wire format: how blocks are written (``format``) and read back (``parse``)."""

from mcpfusion.wire.format import RESERVED_TAGS, fence, neutralize, neutralize_json
from mcpfusion.wire.parse import ParsedError, ParsedResponse, ParsedUIBlock, parse, parse_error

__all__ = [
    "RESERVED_TAGS",
    "ParsedError",
    "ParsedResponse",
    "ParsedUIBlock",
    "fence",
    "neutralize",
    "neutralize_json",
    "parse",
    "parse_error",
]
