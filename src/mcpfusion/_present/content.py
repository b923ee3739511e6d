"""Content beyond text: images, audio, embedded resources and resource links (SPEC §1, §13).

These values travel after a response's text blocks. Handlers return them, builders attach
them, UI callbacks return ``ui.image``/``ui.audio``, prompts put them in messages and
resources send them as contents. Each knows its MCP form (``to_mcp()``); the core never
imports the MCP SDK.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, TypeAlias

# RFC 6838's restricted names: "type/subtype", each a letter or digit then up to 126 of
# letters, digits and !#$&^_.+- ("image/svg+xml", "audio/x-wav").
_NAME: Final = r"[A-Za-z0-9][\w!#$&^.+-]{0,126}"
_MEDIA_TYPE: Final = re.compile(f"{_NAME}/{_NAME}", re.ASCII)


def _check_bytes(owner: str, data: Any) -> None:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"{owner} data must be bytes; got {type(data).__name__}")


def _check_text(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise TypeError(f"{owner} {name} must be a non-empty str; got {value!r}")


def _b64(data: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


@dataclass(frozen=True, slots=True)
class _Media:
    """Bytes of one media kind, sent base64-encoded as MCP ``<kind>`` content."""

    KIND: ClassVar[str]
    data: bytes
    mime_type: str

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_bytes(owner, self.data)
        _check_text(owner, "mime_type", self.mime_type)
        # A client picks how to show the bytes by this type: an "image" of type text/html
        # (or a type carrying parameters, markup, line breaks) is refused where it is made.
        if not _MEDIA_TYPE.fullmatch(self.mime_type) or not self.mime_type.lower().startswith(
            f"{self.KIND}/"
        ):
            raise ValueError(
                f"{owner} mime_type must be {self.KIND}/<subtype> (RFC 6838 characters, "
                f"no parameters); got {self.mime_type!r}"
            )

    def to_mcp(self) -> dict[str, Any]:
        """The MCP content (``ImageContent``, ``AudioContent``) as a JSON-compatible dict."""
        return {"type": self.KIND, "data": _b64(self.data), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Image(_Media):
    """An image sent as MCP image content: ``Image(png_bytes)``.

    Attributes:
        data: the raw bytes (sent base64-encoded).
        mime_type: its type, ``image/png`` unless told.
    """

    KIND: ClassVar[str] = "image"
    mime_type: str = "image/png"


@dataclass(frozen=True, slots=True)
class Audio(_Media):
    """A sound sent as MCP audio content: ``Audio(wav_bytes)``.

    Attributes:
        data: the raw bytes (sent base64-encoded).
        mime_type: its type, ``audio/wav`` unless told.
    """

    KIND: ClassVar[str] = "audio"
    mime_type: str = "audio/wav"


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource's contents carried inline: text or bytes, never both.

    Attributes:
        uri: the resource's URI.
        text: its text, or ``None`` when it is binary.
        blob: its bytes, or ``None`` when it is text.
        mime_type: its type (``text/plain`` for text, ``application/octet-stream`` for
            bytes, unless told).
        meta: the contents' ``_meta``, if any.
    """

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    meta: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_text("EmbeddedResource", "uri", self.uri)
        if (self.text is None) == (self.blob is None):
            raise TypeError("EmbeddedResource takes text= or blob=, exactly one")
        if self.text is not None and not isinstance(self.text, str):
            raise TypeError(f"EmbeddedResource text must be a str; got {type(self.text).__name__}")
        if self.blob is not None:
            _check_bytes("EmbeddedResource", self.blob)
        _check_text("EmbeddedResource", "mime_type", self.mime_type, optional=True)

    def contents(self) -> dict[str, Any]:
        """The MCP ``TextResourceContents`` or ``BlobResourceContents``, as a dict."""
        found: dict[str, Any] = {"uri": self.uri}
        if self.blob is not None:
            found["mimeType"] = self.mime_type or "application/octet-stream"
            found["blob"] = _b64(self.blob)
        else:
            found["mimeType"] = self.mime_type or "text/plain"
            found["text"] = self.text
        if self.meta is not None:
            found["_meta"] = copy.deepcopy(dict(self.meta))
        return found

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``EmbeddedResource`` content as a JSON-compatible dict."""
        return {"type": "resource", "resource": self.contents()}


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A pointer to a resource the client may read: ``ResourceLink(uri, name)``.

    Attributes:
        uri: the resource's URI.
        name: its name.
        description: what it holds, optional.
        mime_type: its type, optional.
    """

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        _check_text("ResourceLink", "uri", self.uri)
        _check_text("ResourceLink", "name", self.name)
        _check_text("ResourceLink", "description", self.description, optional=True)
        _check_text("ResourceLink", "mime_type", self.mime_type, optional=True)

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``ResourceLink`` content as a JSON-compatible dict."""
        found: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.description is not None:
            found["description"] = self.description
        if self.mime_type is not None:
            found["mimeType"] = self.mime_type
        return found


Attachment: TypeAlias = Image | Audio | EmbeddedResource | ResourceLink
"""Content that is not a text block."""

ATTACHMENTS: tuple[type, ...] = (Image, Audio, EmbeddedResource, ResourceLink)
"""The attachment classes, for ``isinstance``."""


def attachments_of(value: Any) -> tuple[Attachment, ...] | None:
    """``value`` as attachments when it is one, or a non-empty list of only them, else ``None``.

    SPEC §13's wrapping rule sends such a value as the content itself.
    """
    if isinstance(value, ATTACHMENTS):
        return (value,)  # type: ignore[return-value]  # narrowed by the tuple of classes
    if isinstance(value, list | tuple) and value and all(isinstance(v, ATTACHMENTS) for v in value):
        return tuple(value)
    return None
