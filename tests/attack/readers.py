"""Independent readers of a tool result, and the check that each sees only the framework's blocks.

A result is a list of blocks; the framework wraps each block but the data block in one
reserved tag (``wrappers``), opened where the block starts and closed where it ends. Each
reader reads the blocks, joined by ``"\\n\\n"``, ``""`` or ``"\\n"`` where it reads text,
and must find exactly those tags, at exactly those places:

- ``parser``: ``mcpfusion.wire.parse`` on the list of blocks finds every expected kind
  and nothing in ``others``, and does not raise;
- ``regex``: a Unicode case-insensitive regular expression, ``<\\s*/?\\s*(names)`` the way
  a lenient reader (Python ``re.I``, JavaScript ``/iu``) would write it;
- ``html.parser``: Python's tokenizer, whose start and end tags with a reserved name
  must be the framework's (a comment, CDATA section, declaration, processing instruction,
  raw-text element or unterminated tag that swallows one makes it go missing);
- ``nfkc``: a reader that compares tag names after NFKC normalization and case folding
  (and without combining marks), which is how SPEC §7 defines a name.

Positions are compared, not counts, so a forged tag and a hidden one cannot cancel out.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

from mcpfusion.wire import parse
from tests.attack.corpus import NAMES

JOINS = ("\n\n", "", "\n")
READERS = ("parser", "regex", "html.parser", "nfkc")

_SPACE = r"[\s\ufeff]"  # Python's \s and JavaScript's (which adds U+FEFF)
LENIENT = re.compile(rf"<{_SPACE}*(/?){_SPACE}*(?:{'|'.join(NAMES)})", re.IGNORECASE)
"""What a lenient, Unicode case-insensitive reader takes for a reserved tag."""
_ANY_TAG = re.compile(r"<([^<]{0,40})", re.DOTALL)
_LEADING_SPACES = re.compile(r"\A[\s\u180e\u200b\ufeff]+")

_BULLET_FIELDS = {
    "llm_directives": "directives",
    "domain_rules": "system_rules",
    "action_suggestions": "suggestions",
}


@dataclass(frozen=True)
class Failure:
    """One reader that did not see exactly the framework's tags."""

    reader: str
    join: str
    detail: str


def expected_tags(
    blocks: Sequence[str], wrappers: Sequence[str | None], join: str
) -> list[tuple[int, bool]]:
    """Where the framework's own tags are in the joined text: ``(offset, closing)``."""
    tags: list[tuple[int, bool]] = []
    offset = 0
    for block, wrapper in zip(blocks, wrappers, strict=True):
        if wrapper is not None:
            tags.append((offset, False))
            tags.append((offset + len(block) - len(f"</{wrapper}>"), True))
        offset += len(block) + len(join)
    return tags


def regex_tags(text: str) -> list[tuple[int, bool]]:
    """The reserved tags the lenient regular expression finds."""
    return [(m.start(), bool(m.group(1))) for m in LENIENT.finditer(text)]


def _folded_name(text: str) -> str:
    """``text`` after NFKC normalization and case folding, without combining marks."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not _is_mark(c))


@functools.cache
def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def _skip_spaces(text: str) -> str:
    return _LEADING_SPACES.sub("", text, count=1)


def nfkc_tags(text: str) -> list[tuple[int, bool]]:
    """The reserved tags of a reader comparing names after NFKC and case folding.

    After the ``<`` (combining marks dropped): optional whitespace, an optional ``/`` (or
    a compatibility form of it), optional whitespace, and a name that starts with a
    reserved one once folded.
    """
    tags = []
    for match in _ANY_TAG.finditer(text):
        rest = match.group(1)
        if not rest.isascii():
            rest = "".join(c for c in rest if not _is_mark(c))
        rest = _skip_spaces(rest)
        closing = (rest[:1] if rest.isascii() else _folded_name(rest[:1])) == "/"
        if closing:
            rest = _skip_spaces(rest[1:])
        name = rest.lower() if rest.isascii() else _folded_name(rest)
        if name.startswith(NAMES):
            tags.append((match.start(), closing))
    return tags


class _TagRecorder(HTMLParser):
    """Records where html.parser reports a reserved start or end tag."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.tags: list[tuple[int, bool]] = []
        self.hiding: list[str] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def _record(self, tag: str, closing: bool) -> None:
        folded = tag if tag.isascii() else _folded_name(tag)
        if tag.startswith(NAMES) or folded.startswith(NAMES):
            self.tags.append((self._offset(), closing))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record(tag, closing=False)

    def handle_endtag(self, tag: str) -> None:
        self._record(tag, closing=True)

    def _swallowed(self, kind: str, data: str) -> None:
        if LENIENT.search(data):
            self.hiding.append(f"{kind} {data[:60]!r}")

    def handle_comment(self, data: str) -> None:
        self._swallowed("comment", data)

    def handle_decl(self, decl: str) -> None:
        self._swallowed("declaration", decl)

    def handle_pi(self, data: str) -> None:
        self._swallowed("processing instruction", data)

    def unknown_decl(self, data: str) -> None:
        self._swallowed("CDATA or marked section", data)


def html_tags(text: str) -> tuple[list[tuple[int, bool]], list[str]]:
    """The reserved tags html.parser reports, and the comments and the like holding one."""
    recorder = _TagRecorder(text)
    recorder.feed(text)
    recorder.close()
    return recorder.tags, recorder.hiding


def _check_parser(blocks: Sequence[str], wrappers: Sequence[str | None]) -> str | None:
    parsed = parse(blocks)
    problems = []
    if parsed.others:
        problems.append(f"others {[o[:60] for o in parsed.others]!r}")
    is_envelope = wrappers[0] in ("tool_error", "validation_error")
    if (parsed.error is not None) != is_envelope:
        problems.append(f"error {parsed.error!r}")
    ui = sum(1 for w in wrappers if w == "ui_passthrough")
    if len(parsed.view.ui_blocks) != ui:
        problems.append(f"{len(parsed.view.ui_blocks)} UI blocks, not {ui}")
    for tag, field in _BULLET_FIELDS.items():
        if bool(getattr(parsed.view, field)) != (tag in wrappers):
            problems.append(f"{field} {getattr(parsed.view, field)!r}")
    return "; ".join(problems) or None


def _compare(
    found: list[tuple[int, bool]], expected: list[tuple[int, bool]], text: str
) -> str | None:
    if found == expected:
        return None
    extra = [(o, c, text[o : o + 30]) for o, c in found if (o, c) not in expected]
    missing = [(o, c, text[o : o + 30]) for o, c in expected if (o, c) not in found]
    return f"forged {extra!r}, hidden {missing!r}"


def check(
    blocks: Sequence[str], wrappers: Sequence[str | None], readers: Sequence[str] = READERS
) -> list[Failure]:
    """Every reader's failure to see exactly the framework's tags in ``blocks``."""
    failures = []
    for block, wrapper in zip(blocks, wrappers, strict=True):
        if wrapper is not None and not (
            re.match(rf"<{wrapper}[ >\n]", block) and block.endswith(f"</{wrapper}>")
        ):
            failures.append(Failure("framework", "", f"not a {wrapper} block: {block[:60]!r}"))
    if "parser" in readers:
        try:
            problem = _check_parser(blocks, wrappers)
        except Exception as exc:
            problem = f"raised {exc!r}"
        if problem:
            failures.append(Failure("parser", "", problem))
    for join in JOINS if len(blocks) > 1 else JOINS[:1]:  # one block: every join is alike
        text = join.join(blocks)
        expected = expected_tags(blocks, wrappers, join)
        if "regex" in readers and (problem := _compare(regex_tags(text), expected, text)):
            failures.append(Failure("regex", join, problem))
        if "nfkc" in readers and (problem := _compare(nfkc_tags(text), expected, text)):
            failures.append(Failure("nfkc", join, problem))
        if "html.parser" in readers:
            try:
                found, hiding = html_tags(text)
                problem = _compare(found, expected, text)
                if hiding:
                    problem = f"{problem or ''} swallowed by {hiding!r}"
            except Exception as exc:
                problem = f"raised {exc!r}"
            if problem:
                failures.append(Failure("html.parser", join, problem))
    return failures
