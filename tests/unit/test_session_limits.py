"""Unit tests of the per-credential session cap and the batch bound: options and flags."""

from __future__ import annotations

import pytest

from mcpfusion import HttpOptions
from mcpfusion.cli import build_parser, http_options


def test_the_batch_bound_has_a_documented_default_and_is_checked() -> None:
    """max_batch_size defaults to 100 and must be a positive int."""
    assert HttpOptions().max_batch_size == 100
    with pytest.raises(ValueError, match="max_batch_size must be positive; got 0"):
        HttpOptions(max_batch_size=0)
    with pytest.raises(TypeError, match="max_batch_size must be a int"):
        HttpOptions(max_batch_size=True)


def test_the_batch_bound_flag_maps_onto_the_option() -> None:
    """--max-batch-size sets HttpOptions.max_batch_size; without it, the default."""
    base = ["run", "app.py", "--http"]
    assert http_options(build_parser().parse_args(base)).max_batch_size == 100
    given = http_options(build_parser().parse_args([*base, "--max-batch-size", "7"]))
    assert given.max_batch_size == 7
