"""The parts of a response: where each bullet block stands among the blocks sent."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from mcpfusion import Presenter, Suggestion, ui
from mcpfusion._present.response import view_of
from mcpfusion._wire.parts import BULLET_KINDS, block_index


class Row(BaseModel):
    n: int


def test_a_bullet_blocks_index_follows_what_the_render_sent() -> None:
    """The index block_index gives is where the render put each kind's block, whichever
    kinds before it sent nothing."""
    presenter = Presenter("P", Row, rules=["a rule"], directives=["a directive"])

    @presenter.ui
    def chart(data: dict[str, int]) -> ui.UIBlock:
        return ui.summary("one")

    @presenter.suggest
    def next_step(data: dict[str, int]) -> Suggestion:
        return Suggestion("t.a", "why")

    response = presenter.present({"n": 1})
    view = view_of(response)
    assert view is not None
    for kind in BULLET_KINDS:
        if getattr(view, kind.field):
            assert response.blocks[block_index(view, kind.field)].startswith(f"<{kind.tag}")
    bare = view_of(Presenter("Q", Row, rules=["only"]).present({"n": 1}))
    assert bare is not None
    assert block_index(bare, "suggestions") == 2  # after the data and the rules block
    with pytest.raises(ValueError, match="'data' is no bullet kind"):
        block_index(bare, "data")
