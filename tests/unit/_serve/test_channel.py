"""One client-channel shape: every serving path's channel is a ``Channel``, asking one way."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from mcpfusion import Root, Sampled
from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.hotpath import _HotClient
from mcpfusion._serve.http.call import HttpClient
from mcpfusion._serve.sdk_client import SdkClient

pytestmark = pytest.mark.anyio

CHANNELS = [SdkClient, HttpClient, _HotClient]


@pytest.mark.parametrize("channel", CHANNELS)
def test_each_path_asks_through_the_one_base(channel: type[Channel]) -> None:
    """No channel writes its own questions: they are ``Channel``'s, reached through ``_ask``."""
    assert issubclass(channel, Channel)
    assert not {"elicit", "sample", "list_roots", "invalidated"} & set(vars(channel))
    assert "_ask" in vars(channel)


class _Answering(Channel):
    """A channel whose client answers every request from ``answers``, recording them."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        super().__init__(None)
        self.answers = answers
        self.asked: list[tuple[str, str | None]] = []

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        self.asked.append((request.method, key))
        return kind.model_validate(self.answers[request.method], by_name=False)


async def test_the_questions_become_the_sdks_requests() -> None:
    """``sample``, ``elicit`` and ``list_roots`` send the SDK's requests and read its results."""
    channel = _Answering(
        {
            "sampling/createMessage": {
                "role": "assistant",
                "content": {"type": "text", "text": "hi"},
                "model": "m",
                "stopReason": "endTurn",
            },
            "elicitation/create": {"action": "accept", "content": {"ok": True}},
            "roots/list": {"roots": [{"uri": "file:///r", "name": "r"}]},
        }
    )
    sampled = await channel.sample(
        [("user", "hello")], system=None, max_tokens=5, temperature=None, key="k"
    )
    assert sampled == Sampled("hi", "m", "endTurn")
    assert await channel.elicit("Sure?", {"type": "object"}) == ("accept", {"ok": True})
    assert await channel.list_roots() == [Root("file:///r", "r")]
    assert channel.asked == [
        ("sampling/createMessage", "k"),
        ("elicitation/create", None),
        ("roots/list", None),
    ]
    assert not channel.protocol_refusals
    assert not await channel.close_sse_stream()
