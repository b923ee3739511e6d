"""SPEC §3: lone surrogates become U+FFFD and MISSING entries are left out, in every format."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toon_format
from pydantic import MISSING

from mcpfusion import response


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
def test_lone_surrogates_and_missing(data_format: Any) -> None:
    """SPEC §3: the block can be encoded, says U+FFFD for the surrogate, and has no MISSING."""
    data = {"name": "a\ud800b", "gone": MISSING, "items": [1, MISSING, "\udfff"]}
    text = response(data, data_format=data_format).build().blocks[0]
    text.encode("utf-8")
    decoded = toon_format.decode(text) if data_format == "toon" else json.loads(text)
    assert decoded == {"name": "a\ufffdb", "items": [1, "\ufffd"]}
