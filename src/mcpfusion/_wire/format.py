"""The wire format: reserved tags, block templates, escaping, neutralization, fences, bullets."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from mcpfusion._errors import ErrorEnvelope
from mcpfusion._wire.markup import closed, left_open

UI_PASSTHROUGH: Final = "ui_passthrough"
LLM_DIRECTIVES: Final = "llm_directives"
DOMAIN_RULES: Final = "domain_rules"
ACTION_SUGGESTIONS: Final = "action_suggestions"
CACHE_INVALIDATION: Final = "cache_invalidation"
TOOL_ERROR: Final = "tool_error"
VALIDATION_ERROR: Final = "validation_error"

RESERVED_TAGS: Final = (
    UI_PASSTHROUGH,
    LLM_DIRECTIVES,
    DOMAIN_RULES,
    ACTION_SUGGESTIONS,
    CACHE_INVALIDATION,
    TOOL_ERROR,
    VALIDATION_ERROR,
)
"""Tag names that only the framework may open or close (SPEC §7)."""

UI_WIDTHS: Final = frozenset({"full", "half", "third"})

SUMMARY_MARKER: Final = "📊 **Summary**: "
"""What a summary UI block's content starts with (SPEC §4.2)."""

TRUNCATION_NOTICE: Final = (
    "⚠️ Dataset truncated. {shown} shown, {hidden} hidden. Use filters to narrow results."
)
"""The summary a Presenter sends when its agent limit cut a list (SPEC §5.3)."""
PAGE_NOTICE: Final = (
    "⚠️ Dataset truncated. Rows {first}-{last} of {total} shown, {hidden} hidden. For the next "
    'page call again with the same arguments and _cursor "{cursor}", or use filters to '
    "narrow results."
)
"""The summary of a paging Presenter's page that has a next one (SPEC §5.4)."""
PAGE_NOTICE_OPEN: Final = (
    "⚠️ Dataset truncated. Rows {first}-{last} shown, more follow. For the next page call "
    'again with the same arguments and _cursor "{cursor}", or use filters to narrow results.'
)
"""The same, when the handler did not say how many rows the whole list holds."""
PAGE_HINT: Final = 'Next page, from row {first}: the same arguments with _cursor "{cursor}"'
"""The reason of the suggestion to fetch the next page (SPEC §5.4)."""

# Whitespace is what str.isspace() says (Python's \s) plus what other readers skip as well:
# U+FEFF (JavaScript's \s), U+180E (a space before Unicode 6.3) and U+200B (zero width).
_EXTRA_SPACES: Final = "\u180e\u200b\ufeff"
_SPACE = rf"[\s{_EXTRA_SPACES}]"
_LONGEST_NAME: Final = max(map(len, RESERVED_TAGS))


def _starts_of(name: str) -> str:
    """A regex matching every non-empty start of ``name``: ``d(?:o(?:m...)?)?``."""
    rest = f"(?:{_starts_of(name[1:])})?" if len(name) > 1 else ""
    return re.escape(name[0]) + rest


# SPEC §7 at C speed. _ANY finds a "<" that may open a reserved tag at all (one before
# "!", "?", whitespace, "/", the first letter of a reserved name or a non-ASCII
# character): text whose every "<" starts other markup ("<b>", "a < 1") is returned after
# that one scan. _PLAIN replaces each "<" before "!" or "?", or before whitespace, an
# optional "/", whitespace and a reserved name spelled in ASCII (any case, and ſ, ı, İ, K
# as Python's re.I reads them): nearly every "<" to neutralize. _UNICODE finds the few a
# non-ASCII character may still make one (full-width letters, ß, a combining mark, a
# full-width "/"), the ASCII before that character being a start of a reserved name;
# only those reach _opens_markup, in Python.
_INITIALS = "".join(sorted({name[0] for name in RESERVED_TAGS}))
_ANY = re.compile(rf"<(?=[!?/\s{_EXTRA_SPACES}{_INITIALS}{_INITIALS.upper()}\x80-\U0010ffff])")
# In a JSON string an escape may stand for whitespace or a letter as well ("<\t/x").
_ANY_JSON = re.compile(
    rf"<(?=[!?/\\\s{_EXTRA_SPACES}{_INITIALS}{_INITIALS.upper()}\x80-\U0010ffff])"
)
_PLAIN = re.compile(rf"<(?=[!?]|{_SPACE}*/?{_SPACE}*(?:{'|'.join(RESERVED_TAGS)}))", re.IGNORECASE)
_STARTS = "|".join(map(_starts_of, RESERVED_TAGS))
_UNICODE = re.compile(rf"<(?={_SPACE}*(?:/{_SPACE}*)?(?:{_STARTS})?[^\x00-\x7f])", re.IGNORECASE)
_UNICODE_JSON = re.compile(
    rf"<(?={_SPACE}*(?:/{_SPACE}*)?(?:{_STARTS})?(?:[^\x00-\x7f]|\\))", re.IGNORECASE
)
# JSON's one-letter escapes; the others (\" \\ \/) stand for the character itself.
_JSON_ESCAPES: Final = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# Every character str.splitlines() breaks on; a run of them folds to one space.
_LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")
_BACKTICK_RUNS = re.compile(r"`{3,}")
# A lone surrogate (as json.loads returns for "\ud800") cannot be encoded as UTF-8: a block
# holding one would make the transport fail the whole call, so it becomes U+FFFD.
_SURROGATES = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """Replaces each lone surrogate, which UTF-8 cannot encode, with U+FFFD."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def _without_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not _is_mark(c))


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str | None:
    """The ASCII text a Unicode-aware reader may take ``char`` for, lower-cased, or ``None``.

    That is its NFKD form without combining marks (``ſ`` is ``s``, ``ｄ`` is ``d``, ``İ`` is
    ``i``, ``ﬆ`` is ``st``) or its case folding, lower or upper case (``ı`` is ``i``, ``ß``
    is ``ss``): a superset of comparing after NFKC normalization and case folding. A
    combining mark is ``""``: a reader that drops marks sees the letter before it alone.
    """
    if char.isascii():
        return char.lower()
    if _is_mark(char):
        return ""
    bare = _without_marks(char)
    forms = (bare, char.casefold(), char.lower(), char.upper(), bare.casefold(), bare.upper())
    for form in (*forms, _without_marks(char.casefold())):
        if form and form.isascii():
            return form.lower()
    return None


def _text_chars(text: str, index: int) -> Iterator[str]:
    return (text[i] for i in range(index, len(text)))


def _json_chars(text: str, index: int) -> Iterator[str]:
    """The characters of the JSON string ``text`` is inside of, from ``index``, decoded."""
    end = len(text)
    while index < end and text[index] != '"':
        char = text[index]
        if char != "\\":
            index += 1
        elif escape := _UNICODE_ESCAPE.match(text, index):
            char, index = chr(int(escape.group(1), 16)), escape.end()
            low = _UNICODE_ESCAPE.match(text, index)
            if "\ud800" <= char < "\udc00" and low and "dc00" <= low.group(1).lower() < "e000":
                # A surrogate pair: a JSON decoder joins the two halves into one character.
                pair = (ord(char) - 0xD800) << 10 | (int(low.group(1), 16) - 0xDC00)
                char, index = chr(0x10000 + pair), low.end()
        else:
            code = text[index + 1 : index + 2]
            char, index = _JSON_ESCAPES.get(code, code), index + 2
        yield char


def _is_space(char: str) -> bool:
    return char.isspace() or char in _EXTRA_SPACES


def _opens_markup(chars: Iterator[str]) -> bool:
    """Whether a ``<`` followed by ``chars`` must be neutralized (SPEC §7).

    It must when ``!`` or ``?`` follows (a comment, CDATA section, declaration or
    processing instruction), or optional whitespace, an optional ``/``, optional whitespace
    and a name that starts with a reserved name once folded to ASCII. Combining marks
    count for nothing anywhere, as for a reader that drops them.
    """
    name = ""
    first = True
    slash = False
    for char in chars:
        folded = _folded(char)
        if folded == "":
            continue
        if first and char in ("!", "?"):
            return True
        first = False
        if not name and (_is_space(char) or (folded == "/" and not slash)):
            slash = slash or folded == "/"
            continue
        if folded is None:
            break
        name += folded
        if len(name) >= _LONGEST_NAME:
            break
    return name.startswith(RESERVED_TAGS)


def _as_entity(match: re.Match[str]) -> str:
    return "&lt;" if _opens_markup(_text_chars(match.string, match.end())) else "<"


def _as_escape(match: re.Match[str]) -> str:
    return "\\u003c" if _opens_markup(_json_chars(match.string, match.end())) else "<"


def neutralize(text: str) -> str:
    """Writes every ``<`` that could open or close a reserved tag as ``&lt;`` (SPEC §7).

    That is a ``<`` before ``!`` or ``?``, or before optional whitespace, an optional ``/``,
    optional whitespace and a name starting with a reserved name in any case, Unicode
    compatibility forms included (``<domain_ruleſ>``, ``</ DOMAIN_RULES>``, ``<!--``).
    Lone surrogates, which no transport can encode, become U+FFFD.
    """
    if not text.isascii():  # scrub's own test, without its frame for the common text
        text = scrub(text)
    if "<" not in text:
        return text
    if _ANY.search(text):
        text = _PLAIN.sub("&lt;", text)
        # _UNICODE needs a non-ASCII character, and isascii() costs nothing.
        if not text.isascii():
            text = _UNICODE.sub(_as_entity, text)
    return closed(text)  # markup the string leaves open (_markup)


def neutralize_json(text: str) -> str:
    """Writes as ``\\u003c`` every ``<`` of a JSON text that ``neutralize`` would rewrite.

    The rule reads each JSON string decoded (``"<\\tdomain_rules>"`` is a tab), so it
    rewrites exactly what ``neutralize`` rewrites in the decoded value. In JSON a ``<`` can
    only occur inside a string, so the decoded value is unchanged.
    """
    if "<" not in text or not _SUSPECT_JSON.search(text):
        return text
    if _ANY_JSON.search(text):
        # _UNICODE_JSON needs a non-ASCII character or an escape; isascii() costs nothing.
        ascii_only = text.isascii() and "\\" not in text
        text = _PLAIN.sub(r"\\u003c", text)
        if not ascii_only:
            text = _UNICODE_JSON.sub(_as_escape, text)
    return _closed_json(text) if _OPEN_JSON.search(text) else text


# Markup left open, in a JSON text: each string holding a "<" before "/" or a letter is
# read by _markup as a reader of the value would, and each "<" it finds left open is
# written \u003c, so the decoded value is unchanged. Only the strings holding such a "<"
# are visited, each once; one without an escape is its value, read in place.
_OPEN_JSON: Final = re.compile(
    # A "<" that may start markup left open: before "/" or a letter, and either opening a
    # raw-text element or not a tag that ends at once without a quote, "=" or escape (<b>,
    # </i>), which no reader runs on. The common "<b>" then costs no Python at all.
    r"<(?=[/A-Za-z])"
    # The first letter is ASCII (above), so the class settles most "<" before the
    # case-insensitive names are tried.
    r"(?:(?=(?=[sStTxXiInNpP])(?i:script|style|textarea|title|xmp|iframe|noembed|noframes"
    r"|noscript|plaintext)(?:[\s/>]|$))|(?![/A-Za-z][^\"<>=\\]*>))"
)
# Either of the two JSON rules (_ANY_JSON, _OPEN_JSON) at one "<", found in one scan: a
# text whose every "<" is harmless (a row holding "<b>") is read once, not twice.
_SUSPECT_JSON: Final = re.compile(f"<(?:{_ANY_JSON.pattern[1:]}|{_OPEN_JSON.pattern[1:]})")
_JSON_STRING: Final = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_JSON_LT: Final = re.compile(r"\\u003c|\\.|<")


def _closed_json(text: str) -> str:
    pieces: list[str] = []
    copied = 0  # text before this is in pieces
    read = 0  # strings before this were read
    for candidate in _OPEN_JSON.finditer(text):
        if candidate.start() < read:
            continue
        start = _string_start(text, candidate.start())
        literal = _JSON_STRING.match(text, start) if start >= 0 else None
        if literal is None:  # not inside a string: not JSON from to_json; left as it is
            continue
        read = literal.end()
        if text.find("\\", start, read) < 0:  # no escape: the string's text is its value
            for index in left_open(text, start + 1, read - 1):
                pieces += (text[copied:index], "\\u003c")
                copied = index + 1
        else:
            pieces += (text[copied:start], _closed_string(literal.group()))
            copied = read
    pieces.append(text[copied:])
    return "".join(pieces)


def _string_start(text: str, index: int) -> int:
    """Where the JSON string holding ``text[index]`` opens: the nearest unescaped quote."""
    quote = text.rfind('"', 0, index)
    while quote > 0:
        backslashes = 0
        while quote - backslashes > 0 and text[quote - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            break
        quote = text.rfind('"', 0, quote)
    return quote


def _closed_string(literal: str) -> str:
    try:  # strict=False: a raw control character is read as itself, as lenient readers do
        value = json.loads(literal, strict=False)
    except ValueError:  # not a JSON string (a bad escape): no reader agrees on its value
        return literal.replace("<", "\\u003c")
    found = left_open(value)
    if not found:
        return literal
    # The n-th "<" of the value is the n-th "<" or \u003c of the literal.
    order = {match.start(): n for n, match in enumerate(re.finditer("<", value))}
    wanted = {order[index] for index in found}
    seen = -1

    def rewrite(token: re.Match[str]) -> str:
        nonlocal seen
        piece = token.group()
        if piece == "<" or piece == "\\u003c":
            seen += 1
            if piece == "<" and seen in wanted:
                return "\\u003c"
        return piece

    return _JSON_LT.sub(rewrite, literal)


def fold_lines(text: str) -> str:
    """Replaces every run of line breaks with one space."""
    # Every line-break character is unprintable, so printable text (the common case)
    # skips the regex.
    return text if text.isprintable() else _LINE_BREAKS.sub(" ", text)


def escape_attr(value: str) -> str:
    """Escapes a value for an XML attribute (all five special characters)."""
    # Chained replace() is several times faster than str.translate() on short strings.
    return (
        scrub(value)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def escape_text(value: str) -> str:
    """Escapes XML element text (``&`` and ``<``)."""
    return scrub(value).replace("&", "&amp;").replace("<", "&lt;")


def fence(lang: str, body: str) -> str:
    """Fences ``body`` with a backtick run longer than any run inside it (CommonMark).

    Raises:
        ValueError: if ``lang`` holds a backtick or a line break.
    """
    if "`" in lang or fold_lines(lang) != lang:
        raise ValueError(f"a fence language cannot hold backticks or line breaks: {lang!r}")
    ticks = "```"
    if ticks in body:  # a substring search: most bodies (a chart's JSON) hold no fence
        ticks = "`" * (1 + max(len(run) for run in _BACKTICK_RUNS.findall(body)))
    return f"{ticks}{lang}\n{body}\n{ticks}"


def ui_passthrough(
    type: str,
    content: str,
    *,
    title: str = "",
    width: str | None = None,
    priority: int | None = None,
) -> str:
    """Renders one ``<ui_passthrough>`` block (SPEC §4.1); the content is neutralized."""
    if len(type) + len(title) > _REMEMBERED_LENGTH:
        opening = _opening(type, title, width, priority)
    else:  # most blocks are a few kinds with fixed titles: their tag is remembered
        opening = _remembered_opening(type, title, width, priority)
    return f"{opening}\n{neutralize(content)}\n</{UI_PASSTHROUGH}>"


def _opening(type: str, title: str, width: str | None, priority: int | None) -> str:
    attrs = f' type="{escape_attr(type)}"'
    if title:
        attrs += f' title="{escape_attr(title)}"'
    if width is not None:
        attrs += f' width="{escape_attr(width)}"'
    if priority is not None:
        attrs += f' priority="{priority}"'
    return f"<{UI_PASSTHROUGH}{attrs}>"


def bullet_entry(text: str) -> str:
    """Returns ``text`` as it appears in a bullet line: line breaks folded, tags neutralized."""
    # Most entries are a Presenter's fixed rules and suggestions, sent with every call:
    # remembered, they cost a lookup instead of a fold and a neutralization.
    return _remembered_entry(text) if len(text) <= _REMEMBERED_LENGTH else _entry(text)


def _entry(text: str) -> str:
    return neutralize(fold_lines(text))


_REMEMBERED_LENGTH: Final = 1_000
_remembered_entry: Final = functools.lru_cache(maxsize=4_096)(_entry)
_remembered_opening: Final = functools.lru_cache(maxsize=4_096, typed=True)(_opening)


def bullet_entries(entries: Iterable[str], after: Sequence[str] = ()) -> list[str]:
    """Renders entries for a bullet block, dropping empty ones and later duplicates.

    ``after`` holds lines already rendered (a Presenter's fixed entries): they come first,
    and the entries repeating one are dropped.
    """
    seen: dict[str, None] = dict.fromkeys(after)
    for entry in entries:
        line = bullet_entry(entry)
        if line.strip():
            seen.setdefault(line, None)
    return list(seen)


def bullet_block(tag: str, entries: Sequence[str], attribute: tuple[str, str] | None = None) -> str:
    """Renders already-prepared entries (at least one) as a bullet block.

    ``attribute`` is the opening tag's one ``(name, value)`` attribute, escaped here
    (SPEC §15's ``caused_by``).
    """
    opening = tag if attribute is None else f'{tag} {attribute[0]}="{escape_attr(attribute[1])}"'
    return f"<{opening}>\n- " + "\n- ".join(entries) + f"\n</{tag}>"


def suggestion_entry(tool: str, reason: str) -> str:
    """Formats one action suggestion as ``tool: reason``."""
    return f"{tool}: {reason}"


def tool_error(envelope: ErrorEnvelope) -> str:
    """Renders an error envelope as the ``<tool_error>`` block of SPEC §9."""
    lines = [
        f'<{TOOL_ERROR} code="{escape_attr(envelope.code)}" '
        f'severity="{escape_attr(envelope.severity)}">',
        f"<message>{escape_text(envelope.message)}</message>",
    ]
    if envelope.recovery:
        lines.append(f"<recovery>{escape_text(envelope.recovery)}</recovery>")
    if envelope.available_actions:
        lines.append("<available_actions>")
        lines.extend(f"  <action>{escape_text(a)}</action>" for a in envelope.available_actions)
        lines.append("</available_actions>")
    if envelope.details:
        lines.append("<details>")
        lines.extend(
            f'  <detail key="{escape_attr(key)}">{escape_text(str(value))}</detail>'
            for key, value in envelope.details.items()
        )
        lines.append("</details>")
    if envelope.retry_after is not None:
        lines.append(f"<retry_after>{envelope.retry_after} seconds</retry_after>")
    lines.append(f"</{TOOL_ERROR}>")
    return "\n".join(lines)


VALIDATION_RECOVERY: Final = "Fix the fields above and call the tool again."


def validation_error(action: str, fields: Sequence[tuple[str, str]]) -> str:
    """Renders the ``<validation_error>`` envelope of SPEC §9 from ``(path, text)`` pairs."""
    lines = [f'<{VALIDATION_ERROR} action="{escape_attr(action)}">']
    lines.extend(
        f'<field name="{escape_attr(name)}">{escape_text(text)}</field>' for name, text in fields
    )
    lines.append(f"<recovery>{VALIDATION_RECOVERY}</recovery>")
    lines.append(f"</{VALIDATION_ERROR}>")
    return "\n".join(lines)
