"""SPEC §1, §2 and §13: content beyond text, and resources and prompts under the one rule."""

from __future__ import annotations

import base64
from typing import Any

import anyio
from pydantic import BaseModel

from mcpfusion import (
    Audio,
    EmbeddedResource,
    Fusion,
    Image,
    Presenter,
    ResourceLink,
    messages_from_view,
    response,
    ui,
)
from mcpfusion.testing import FusionTester
from tests.conformance.sample_app import PINNED

PNG = b"\x89PNG\r\n\x1a\n"


class Thing(BaseModel):
    """A presented entity."""

    a: int


def presenter() -> Presenter:
    """A Presenter with a rule, a suggestion-free UI chart and an image from its UI callback."""
    view = Presenter("Thing", Thing, rules=["a is an int."])

    @view.ui
    def picture(data: Any) -> list[Any]:
        return [ui.image(PNG), ui.markdown("**thing**")]

    return view


def test_other_content_follows_every_text_block_in_order_added() -> None:
    """Images, audio, resources and links come after the data, UI and bullet blocks."""
    built = (
        response({"a": 1})
        .attach(Image(PNG), Audio(b"RIFF", "audio/wav"))
        .rule("a rule")
        .ui(ui.summary("s"))
        .attach(EmbeddedResource("x://r", text="t"), ResourceLink("x://l", "l"))
        .build()
    )
    content = built.to_mcp()["content"]
    assert [item["type"] for item in content] == [
        "text", "text", "text", "image", "audio", "resource", "resource_link",
    ]  # fmt: skip
    assert content[3] == {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mimeType": "image/png",
    }
    assert content[5]["resource"] == {"uri": "x://r", "mimeType": "text/plain", "text": "t"}


def test_a_handler_returning_content_sends_it_alone() -> None:
    """Rule 4: an image, or a list of only content items, is the content, without text."""
    app = Fusion("app", **PINNED)
    tool = app.tool("t")
    tool.action("one", returns=presenter())(lambda: Image(PNG))
    tool.action("many")(lambda: [Image(PNG), EmbeddedResource("x://r", blob=b"\x00")])
    tool.action("mixed")(lambda: [Image(PNG), "text"])
    tester = FusionTester(app)
    one = tester.call_sync("t", "one")
    assert one.blocks == () and [i["type"] for i in one.raw["content"]] == ["image"]
    many = tester.call_sync("t", "many").raw["content"]
    assert [i["type"] for i in many] == ["image", "resource"]
    assert many[1]["resource"] == {
        "uri": "x://r",
        "mimeType": "application/octet-stream",
        "blob": "AA==",
    }
    # A list mixing content with other values is data, and raw bytes are not JSON.
    assert tester.call_sync("t", "mixed").error_code == "INTERNAL_ERROR"


def test_a_presenter_ui_callback_attaches_an_image_after_the_text() -> None:
    """ui.image from a UI callback is attached; the UI block list holds the markdown only."""
    app = Fusion("app", **PINNED)
    app.tool("t").action("a", returns=presenter())(lambda: {"a": 1})
    result = FusionTester(app).call_sync("t", "a")
    assert [b.type for b in result.ui_blocks] == ["markdown"]
    assert result.attachments == (Image(PNG),)
    assert [i["type"] for i in result.raw["content"]] == ["text", "text", "text", "image"]


def test_a_resource_read_sends_the_blocks_in_order_typed_by_format() -> None:
    """A read: the data block first as JSON (TOON when chosen), other blocks as text, then
    the image; bytes are one blob."""
    app = Fusion("app", **PINNED)
    app.resource("x://thing/{a}", returns=presenter())(lambda a: {"a": a})
    toon = Presenter("Thing", Thing, data_format="toon")
    app.resource("x://toon", returns=toon)(lambda: [{"a": 1}])
    app.resource("x://bytes", mime_type="image/png")(lambda: PNG)
    tester = FusionTester(app)

    async def read() -> list[Any]:
        return [await tester.read_resource(uri) for uri in ("x://thing/3", "x://toon", "x://bytes")]

    thing, tabular, raw = anyio.run(read)
    assert [(c["mimeType"], c["uri"]) for c in thing.contents] == [
        ("application/json", "x://thing/3"),
        ("text/plain", "x://thing/3"),
        ("text/plain", "x://thing/3"),
        ("image/png", "x://thing/3#image"),
    ]
    assert thing.contents[0]["text"] == '{\n  "a": 3\n}'
    assert thing.contents[2]["text"] == "<domain_rules>\n- a is an int.\n</domain_rules>"
    assert tabular.contents[0]["mimeType"] == "text/toon"
    assert raw.contents == (
        {"uri": "x://bytes", "mimeType": "image/png", "blob": base64.b64encode(PNG).decode()},
    )


def test_a_prompt_sends_one_message_per_block_then_its_content() -> None:
    """messages_from_view: data, rules (no UI unless asked), then the image as a message."""
    view = presenter()
    plain = messages_from_view(view, {"a": 1})
    assert [m.text for m in plain] == [
        '{\n  "a": 1\n}',
        "<domain_rules>\n- a is an int.\n</domain_rules>",
        None,
    ]
    assert plain[2].content == Image(PNG)
    with_ui = messages_from_view(view, {"a": 1}, with_ui=True)
    assert len(with_ui) == 4 and (with_ui[1].text or "").startswith("<ui_passthrough")
