"""Markup a string leaves open (SPEC §7's last clause): the ``<`` an HTML reader would let
run on into the framework's text after the string.

An HTML-style tokenizer does not stop a tag where the string holding it ends: ``<b``,
``</b`` or ``<b title="x`` (a quote opened after ``=`` and never closed) runs on into the
framework's next tag and swallows it, and ``<script>`` without its end tag turns every
later block into raw text. Such a ``<`` (before ``/`` or an ASCII letter) is neutralized;
markup that ends inside its string (``<b>``, ``<a href="x">``) is kept.
"""

from __future__ import annotations

import re
from typing import Final

_CANDIDATE: Final = re.compile(r"<(?=[/A-Za-z])")
# The rest of a tag after its "<": up to a ">", a quoted value after "=" skipped whole. A
# quote opened after "=" and never closed matches no branch, so the tag is left open.
# Possessive throughout: no backtracking, linear in what it scans.
_TAG_REST: Final = re.compile(r"""(?:[^>=]++|=(?!\s*+["'])|=\s*+"[^"]*+"|=\s*+'[^']*+')*+>""")
_RAW_TEXT_NAMES: Final = (
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
)
_RAW_TEXT: Final = re.compile(rf"({'|'.join(_RAW_TEXT_NAMES)})(?=[\s/>]|$)", re.IGNORECASE)
_RAW_TEXT_END: Final = {
    name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in _RAW_TEXT_NAMES
}
_BUDGET: Final = 20_000_000
"""Candidates x length past which every candidate is taken as open: each is scanned to its
end, so a string packed with ``<a`` would cost quadratic time; beyond this, neutralizing
them all is linear (and only such strings lose their complete markup)."""


def left_open(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """The indices of the ``<`` in ``text[start:end]`` that start markup left open there
    (see the module); the span is read as if it were the whole string."""
    end = len(text) if end is None else end
    starts = [match.start() for match in _CANDIDATE.finditer(text, start, end)]
    if not starts or len(starts) * (end - start) > _BUDGET:
        return starts
    found = []
    for index in starts:
        tag = _TAG_REST.match(text, index + 1, end)
        if tag is None:
            found.append(index)
            continue
        raw = _RAW_TEXT.match(text, index + 1, end)
        if raw and not _RAW_TEXT_END[raw.group(1).lower()].search(text, tag.end(), end):
            found.append(index)
    return found


def closed(text: str, entity: str = "&lt;") -> str:
    """``text`` with each ``<`` that ``left_open`` finds written as ``entity``."""
    found = left_open(text)
    if not found:
        return text
    pieces: list[str] = []
    last = 0
    for index in found:
        pieces += (text[last:index], entity)
        last = index + 1
    pieces.append(text[last:])
    return "".join(pieces)
