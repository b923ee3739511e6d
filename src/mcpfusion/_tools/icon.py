"""``Icon``: an image a client shows beside a server or a tool (MCP ``Icon``, 2025-11-25+)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcpfusion._errors import DefinitionError

IconTheme = Literal["light", "dark"]

_SIZE: Final = re.compile(r"(?:[1-9][0-9]{0,4}x[1-9][0-9]{0,4}|any)\Z")
_SCHEMES: Final = ("https://", "http://", "data:")


@dataclass(frozen=True, slots=True)
class Icon:
    """An icon by URI, with what a client needs to pick one.

    Example::

        Icon("https://example.com/billing.svg", mime_type="image/svg+xml", sizes=("any",))

    Attributes:
        src: an ``https:``, ``http:`` or ``data:`` URI; clients fetch it, so it should be on a
            domain they can trust.
        mime_type: the image's type, when the URI does not say.
        sizes: ``"48x48"``-style sizes, or ``"any"`` (a vector image).
        theme: the theme it is drawn for (``"light"`` or ``"dark"``); any theme otherwise.

    Raises:
        DefinitionError: on a URI of another scheme, a malformed size or an unknown theme.
    """

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] = field(default=())
    theme: IconTheme | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.src, str) or not self.src.startswith(_SCHEMES):
            raise DefinitionError(
                f"an Icon's src is an https:, http: or data: URI; got {self.src!r}"
            )
        if self.mime_type is not None and (
            not isinstance(self.mime_type, str) or "/" not in self.mime_type
        ):
            raise DefinitionError(
                f"an Icon's mime_type is like 'image/png'; got {self.mime_type!r}"
            )
        sizes = self.sizes
        if isinstance(sizes, str) or not all(isinstance(s, str) and _SIZE.match(s) for s in sizes):
            raise DefinitionError(f"an Icon's sizes are like ('48x48', 'any'); got {sizes!r}")
        object.__setattr__(self, "sizes", tuple(sizes))
        if self.theme not in (None, "light", "dark"):
            raise DefinitionError(f"an Icon's theme is 'light' or 'dark'; got {self.theme!r}")

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``Icon`` object: ``src``, then the fields that are set."""
        found: dict[str, Any] = {"src": self.src}
        if self.mime_type is not None:
            found["mimeType"] = self.mime_type
        if self.sizes:
            found["sizes"] = list(self.sizes)
        if self.theme is not None:
            found["theme"] = self.theme
        return found


def icons_of(owner: str, icons: Sequence[Icon]) -> tuple[Icon, ...]:
    """``icons`` checked at definition time.

    Raises:
        DefinitionError: naming ``owner``, when ``icons`` is not a sequence of ``Icon``.
    """
    if isinstance(icons, str | Icon) or not all(isinstance(icon, Icon) for icon in icons):
        raise DefinitionError(f"{owner}: icons is a list of Icon; got {icons!r}")
    return tuple(icons)


def optional_text(owner: str, name: str, value: str | None) -> str | None:
    """A display string (a title, a description, a URL) checked at definition time.

    Raises:
        DefinitionError: naming ``owner`` and ``name``, when ``value`` is not a non-empty str.
    """
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise DefinitionError(f"{owner}: {name} must be a non-empty str or None; got {value!r}")
    return value
