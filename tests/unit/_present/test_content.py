"""Content beyond text: the values, their MCP form, and where builders put them."""

from __future__ import annotations

import pytest

from mcpfusion import (
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
    as_response,
    response,
    ui,
)
from mcpfusion._present.content import attachments_of


def test_each_value_has_its_mcp_form() -> None:
    """Image and audio are base64 with a MIME type; resources and links as MCP spells them."""
    assert Image(b"\x01").to_mcp() == {"type": "image", "data": "AQ==", "mimeType": "image/png"}
    assert Audio(b"\x01", "audio/mpeg").to_mcp()["mimeType"] == "audio/mpeg"
    assert EmbeddedResource("x://a", text="t", mime_type="text/markdown").to_mcp() == {
        "type": "resource",
        "resource": {"uri": "x://a", "mimeType": "text/markdown", "text": "t"},
    }
    assert ResourceLink("x://a", "a", description="d").to_mcp() == {
        "type": "resource_link",
        "uri": "x://a",
        "name": "a",
        "description": "d",
    }


def test_bad_values_are_refused_where_they_are_made() -> None:
    """Non-bytes data, both or neither of text and blob, and an empty URI raise TypeError."""
    with pytest.raises(TypeError, match="Image data must be bytes"):
        Image("not bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="exactly one"):
        EmbeddedResource("x://a", text="t", blob=b"b")
    with pytest.raises(TypeError, match="exactly one"):
        EmbeddedResource("x://a")
    with pytest.raises(TypeError, match="ResourceLink uri must be a non-empty str"):
        ResourceLink("", "a")


def test_attach_keeps_order_and_skips_none() -> None:
    """attach() adds after the text blocks in call order; None is skipped, other types refused."""
    built = response("x").attach(Image(b"1"), None).attach(Audio(b"2")).build()
    assert built.attachments == (Image(b"1"), Audio(b"2"))
    with pytest.raises(TypeError, match="attach expects Image or Audio"):
        response("x").attach("text")  # type: ignore[arg-type]


def test_ui_helpers_make_content_the_builder_attaches() -> None:
    """ui.image and ui.audio passed to builder.ui() are attached, not UI blocks."""
    built = response("x").ui(ui.image(b"1"), ui.summary("s"), ui.audio(b"2")).build()
    assert len(built.blocks) == 2
    assert built.attachments == (Image(b"1"), Audio(b"2", "audio/wav"))


def test_only_content_values_are_sent_alone() -> None:
    """A value, or a non-empty list of only content values, is content; anything else is data."""
    assert attachments_of(Image(b"1")) == (Image(b"1"),)
    assert attachments_of([Image(b"1"), ResourceLink("x://a", "a")]) is not None
    assert attachments_of([]) is None
    assert attachments_of([Image(b"1"), 1]) is None
    assert as_response(Image(b"1")).blocks == ()


def test_without_ui_keeps_the_notice_only() -> None:
    """without_ui() drops UI blocks and embeds but keeps a notice the model must read."""
    built = response([1]).notice(ui.summary("cut")).ui(ui.markdown("m")).embed(ui.json(1))
    assert len(built.without_ui().build().blocks) == 2


def test_a_media_type_must_be_of_its_kind_and_plain() -> None:
    """Image takes image/* and Audio audio/*, RFC 6838 names without parameters."""
    assert Image(b"1", "image/svg+xml").mime_type == "image/svg+xml"
    assert Audio(b"1", "audio/x-wav").mime_type == "audio/x-wav"
    for bad in ("text/html", "image/", "image/png; q=1", "image/png\n", "image/<b>", "audio/wav"):
        with pytest.raises(ValueError, match="Image mime_type must be image/<subtype>"):
            Image(b"1", bad)
    with pytest.raises(ValueError, match="Audio mime_type must be audio/<subtype>"):
        Audio(b"1", "image/png")
