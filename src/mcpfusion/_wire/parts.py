"""The parts of a response (SPEC §2) as values: UI blocks, suggestions and the whole view."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcpfusion._wire.format import (
    ACTION_SUGGESTIONS,
    CACHE_INVALIDATION,
    DOMAIN_RULES,
    LLM_DIRECTIVES,
    UI_WIDTHS,
    bullet_entries,
    fold_lines,
    suggestion_entry,
    ui_passthrough,
)

_TOOL_REF: Final = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")
# A content that is exactly one fenced block (SPEC §4.2's fence()).
_FENCED: Final = re.compile(r"(`{3,})([^`\n]*)\n(.*)\n\1", re.DOTALL)


@dataclass(frozen=True, slots=True)
class UIBlock:
    """One ``<ui_passthrough>`` block: a type, its content and optional layout metadata.

    The same value is built by the ``ui`` helpers and read back by ``mcpfusion.wire.parse``.

    Raises:
        TypeError: if a field has the wrong type.
        ValueError: if ``type`` is empty or not a single line, or ``width`` is not
            full/half/third.
    """

    type: str
    content: str
    title: str = ""
    width: str | None = None
    priority: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, str):
            raise TypeError(f"a UI block type is a str; got {type(self.type).__name__}")
        if not self.type or fold_lines(self.type) != self.type:
            raise ValueError(f"a UI block type must be a non-empty single line: {self.type!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"content must be a str; got {type(self.content).__name__}")
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a str; got {type(self.title).__name__}")
        if self.width is not None and self.width not in UI_WIDTHS:
            raise ValueError(f"width must be one of full, half, third; got {self.width!r}")
        if self.priority is not None:
            if isinstance(self.priority, bool) or not isinstance(self.priority, int):
                raise TypeError(f"priority must be an int; got {self.priority!r}")
            # A subclass (an IntEnum) may write anything as its text: the attribute holds
            # the plain number.
            object.__setattr__(self, "priority", int.__int__(self.priority))

    @property
    def text(self) -> str:
        """The block as it appears on the wire."""
        return ui_passthrough(
            self.type, self.content, title=self.title, width=self.width, priority=self.priority
        )

    @property
    def lang(self) -> str | None:
        """The fence language when the whole content is one fenced block, else ``None``."""
        fenced = _FENCED.fullmatch(self.content)
        return fenced.group(2) if fenced else None

    @property
    def body(self) -> str:
        """The content without its fence (the content itself when it is not fenced)."""
        fenced = _FENCED.fullmatch(self.content)
        return fenced.group(3) if fenced else self.content


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A next action for the agent: ``tool`` (e.g. ``billing.remind``) and why.

    Raises:
        ValueError: if ``tool`` is not 1-128 characters of letters, digits, ``_.-/``.
    """

    tool: str
    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not _TOOL_REF.fullmatch(self.tool):
            raise ValueError(
                f"a suggestion names a tool as 1-128 letters, digits or _.-/; got {self.tool!r}"
            )
        if not isinstance(self.reason, str):
            raise TypeError(f"a suggestion's reason is a str; got {type(self.reason).__name__}")

    @property
    def entry(self) -> str:
        """The bullet text, ``tool: reason``."""
        return suggestion_entry(self.tool, self.reason)

    @classmethod
    def from_entry(cls, entry: str) -> Suggestion:
        """The suggestion a bullet text ``tool: reason`` names.

        Raises:
            ValueError: if the text names no valid tool.
        """
        tool, _, reason = entry.partition(": ")
        return cls(tool, reason)


@dataclass(frozen=True, slots=True)
class ResponseView:
    """The parts of a response, in SPEC §2 order and with SPEC's names.

    A Presenter renders one, ``ResponseBuilder`` collects one, every built response
    carries its own beside the wire text (SPEC §13's side door, read with ``view_of``),
    the testing result exposes it, and ``mcpfusion.wire.parse`` reads one back from any
    result's text (where embeds cannot be told from UI blocks, so they stay in
    ``ui_blocks``).

    Attributes:
        data: the value of the data block (before ``_select`` and serialization when
            collected, the value sent when carried by a built response).
        ui_blocks: UI blocks (kind 2).
        embeds: blocks of child Presenters (kind 3).
        directives: ``<llm_directives>`` entries.
        system_rules: ``<domain_rules>`` entries.
        suggestions: ``<action_suggestions>`` entries.
        invalidations: ``<cache_invalidation>`` entries, the state-name patterns a
            mutation made stale (SPEC §15).
        caused_by: the ``{tool}.{action}`` whose success sent them (the block's
            ``caused_by`` attribute; empty when none is known).
    """

    data: Any = None
    ui_blocks: tuple[UIBlock, ...] = ()
    embeds: tuple[UIBlock, ...] = ()
    directives: tuple[str, ...] = ()
    system_rules: tuple[str, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()
    invalidations: tuple[str, ...] = ()
    caused_by: str = ""


def _text(entry: Any) -> str:
    return entry if isinstance(entry, str) else str(entry.entry)


@dataclass(frozen=True, slots=True)
class BulletKind:
    """One kind of bullet block (SPEC §8), as rendering, parsing and the CLI see it.

    Attributes:
        field: the ``ResponseView`` field holding its entries.
        tag: the block's tag.
        label: its name in the CLI.
        read: the entry a bullet line stands for (the line itself for text entries).
        attribute: the ``ResponseView`` field sent as the opening tag's one attribute
            (of the same name), when the block has one.
        text: the free text of an entry, which redaction censors; ``None`` for a kind
            whose entries are names only (state names).
        with_text: the entry with its free text replaced.
    """

    field: str
    tag: str
    label: str
    read: Callable[[str], Any] = str
    attribute: str | None = None
    text: Callable[[Any], str] | None = str
    with_text: Callable[[Any, str], Any] = lambda _entry, text: text

    def lines(self, entries: Sequence[Any], after: Sequence[str] = ()) -> list[str]:
        """The entries' bullet lines: folded, neutralized, the empty and repeated dropped;
        ``after`` holds lines already rendered, which come first."""
        return bullet_entries(map(_text, entries), after)


# A response's view holds what was sent, so each suggestion line is read back; the lines
# are mostly a Presenter's fixed suggestions, remembered as their (immutable) values.
_read_suggestion: Final = functools.lru_cache(maxsize=4_096)(Suggestion.from_entry)


def _suggestion_of(line: str) -> Suggestion:
    return _read_suggestion(line) if len(line) <= 1_000 else Suggestion.from_entry(line)


BULLET_KINDS: Final = (
    BulletKind("directives", LLM_DIRECTIVES, "directives"),
    BulletKind("system_rules", DOMAIN_RULES, "rules"),
    BulletKind(
        "suggestions",
        ACTION_SUGGESTIONS,
        "suggestions",
        _suggestion_of,
        text=lambda suggestion: suggestion.reason,
        with_text=lambda suggestion, reason: Suggestion(suggestion.tool, reason),
    ),
    BulletKind(
        "invalidations", CACHE_INVALIDATION, "invalidates", attribute="caused_by", text=None
    ),
)
"""The bullet blocks, in the order they are sent (SPEC §2, kinds 4 to 7)."""

BULLET_ATTRIBUTES: Final = tuple(kind.attribute for kind in BULLET_KINDS if kind.attribute)
"""The ``ResponseView`` fields that are bullet blocks' attributes, not entries."""


def block_index(view: ResponseView, field: str) -> int:
    """Where the bullet block of ``field`` stands in the text blocks rendered from ``view``:
    after the data block, the UI blocks, the embeds and the bullet blocks sent before it
    (SPEC §2 order; a kind without entries sends no block)."""
    at = 1 + len(view.ui_blocks) + len(view.embeds)
    for kind in BULLET_KINDS:
        if kind.field == field:
            return at
        at += bool(getattr(view, kind.field))
    raise ValueError(f"{field!r} is no bullet kind")
