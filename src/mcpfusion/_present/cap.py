"""The byte cap of an answer: its size, the blocks left out, and the notice (SPEC §17)."""

from __future__ import annotations

import dataclasses
from typing import Final

from mcpfusion._present.response import ToolResponse, view_of, with_view
from mcpfusion._present.ui import summary

__all__ = ["CAP_MARKER", "fitted", "notice", "size_of", "ui_count"]

CAP_MARKER: Final = "✂️ Answer capped at "
"""How the notice of a capped answer starts, after the summary marker."""


def size_of(response: ToolResponse) -> int:
    """What the cap measures: the UTF-8 bytes of the answer's text items, every block."""
    # surrogatepass: a lone surrogate left in a hand-made block is counted, not a crash.
    return sum(len(block.encode("utf-8", "surrogatepass")) for block in response.blocks)


def ui_count(response: ToolResponse) -> int:
    """How many UI blocks and embeds (kinds 2 and 3) follow the data block.

    Known from the response's view (SPEC §13); a response without one (a hand-made
    ``ToolResponse``) has none that could be told from its other blocks.
    """
    view = view_of(response)
    if view is None or not response.blocks:
        return 0
    return len(view.ui_blocks) + len(view.embeds)


def notice(cap: int, blocks_left_out: int, rows_kept: int, rows: int) -> str:
    """The notice's text: the cap, and what was left out to fit it."""
    parts = []
    if blocks_left_out:
        parts.append(f"{blocks_left_out} UI block{'' if blocks_left_out == 1 else 's'}")
    if rows_kept < rows:
        parts.append(f"{rows - rows_kept} of {rows} rows")
    return (
        f"{CAP_MARKER}{cap} bytes: {' and '.join(parts)} left out. Ask for less (filters, "
        "fewer fields, a smaller page) to see the rest."
    )


def fitted(response: ToolResponse, keep: int, text: str) -> ToolResponse:
    """``response`` with only its first ``keep`` UI blocks and embeds, and ``text`` as a
    summary block before them: the first UI block, for the model too (no annotation).

    Whole blocks go or stay: nothing is cut inside a block, a JSON value or a character.
    """
    view = view_of(response)
    assert view is not None and response.blocks, "only a response with a view has UI blocks"
    count = len(view.ui_blocks) + len(view.embeds)
    block = summary(text)
    blocks = (response.blocks[0], block.text, *response.blocks[1 : 1 + keep])
    blocks += response.blocks[1 + count :]
    marks = response.annotations
    if marks:
        marks = (marks[0], None, *marks[1 : 1 + keep], *marks[1 + count :])
    shown = view.ui_blocks[:keep]
    embeds = view.embeds[: max(0, keep - len(view.ui_blocks))]
    kept = ToolResponse(
        blocks,
        response.is_error,
        response.structured_content,
        marks,
        response.attachments,
    )
    return with_view(kept, dataclasses.replace(view, ui_blocks=(block, *shown), embeds=embeds))
