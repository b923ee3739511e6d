"""SPEC §9: a Presenter whose callback fails answers PRESENTER_ERROR, with no detail leaked."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import Fusion, Presenter
from mcpfusion.testing import FusionTester


class Item(BaseModel):
    """What the agent may see of an item."""

    id: str


def _app() -> Fusion:
    view = Presenter("Item", Item)

    @view.ui
    def broken(item: dict[str, Any]) -> Any:
        return item["missing /etc/passwd"]

    app = Fusion("shop")
    app.tool("shop").action("get", returns=view)(lambda: {"id": "i-1"})
    return app


@pytest.mark.anyio
async def test_a_raising_callback_is_presenter_error(caplog: pytest.LogCaptureFixture) -> None:
    """SPEC §9: a callback that raises is PRESENTER_ERROR; its message and repr stay in the log."""
    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = await FusionTester(_app()).call("shop", "get")
    assert result.blocks == (
        '<tool_error code="PRESENTER_ERROR" severity="error">\n'
        "<message>Action 'get' of tool 'shop' could not present its data. Presenter 'Item' "
        "failed: a callback raised KeyError</message>\n<recovery>This is a defect on the server "
        "side: retrying the same call will not help. Tell the user this action is "
        "unavailable.</recovery>\n</tool_error>",
    )
    assert "passwd" in caplog.text  # the traceback went to the log, not the wire
