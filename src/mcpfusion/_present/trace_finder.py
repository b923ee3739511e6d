"""Redaction's finder of traces in a text: a prefix prefilter, else an Aho-Corasick automaton."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Final

import ahocorasick

MIN_TRACE: Final = 4
"""The shortest string (characters) or number (digits) searched for in the other blocks:
shorter values would match inside unrelated text."""

_ESCAPED: Final = re.compile(r'["\\\x00-\x1f]')
"""A character JSON writes escaped: a form holding one is also searched for escaped."""

MAX_PREFIXES: Final = 8
"""The most distinct prefixes searched one ``str.find`` pass each: a pass costs about a
tenth of an automaton pass, and the automaton's build is saved."""

MAX_LENGTHS: Final = 16
"""The most distinct form lengths the prefilter looks up at each prefix found."""

CHECKS_PER_CHAR: Final = 1 / 64
"""The prefilter's budget of lookups a character of text, half what the automaton's pass
over it costs (the benchmark's notes need a lookup every 120 characters). A text so full
of prefixes that it needs more than its budget (hostile, or unlucky) is searched by the
automaton, so its cost stays bounded: 500,000 characters of prefixes cost about 1.5x the
automaton alone (build and pass), a text of ordinary prose about half of it."""

CHECKS_PER_FORM: Final = 1 / 4
"""The budget's part for the automaton's build (a lookup every 4 forms, about half the
build's cost), while it is not built: a short text dense with real hits (a table of the
values) spares the build."""

CHECKS_SLACK: Final = 256

_PLAIN_ASCII: Final = bytes(c for c in range(0x20, 0x80) if c not in b'"\\')
"""The ASCII characters JSON writes as they are."""

_PLAIN_OR_NUL: Final = _PLAIN_ASCII + b"\0"
_ESCAPED_BUT_NUL: Final = re.compile(r'["\\\x01-\x1f]')

Hit = tuple[int, tuple[str, str]]
"""A hit: where it ends in the text searched, and (the trace, its text)."""

_PREFIX: Final = itemgetter(slice(0, MIN_TRACE))


class Finder:
    """Finds every form in a text, overlapping ones included.

    Forms are the redacted values' string forms, all at least ``MIN_TRACE`` long; a form
    holding a character JSON escapes is also found escaped (JSON data, ``ui.json``,
    ECharts options). Redacted values mostly share a few prefixes (invoice numbers
    ``2024-``, emails ``billing``) and lengths: each prefix is found with ``str.find`` (in
    C) and at each occurrence the text of each form length is looked up, longest first.
    An Aho-Corasick automaton of every form (pyahocorasick), whose build costs
    milliseconds for 10,000 forms, is made only when the prefixes or lengths are too many
    or a text holds too many prefixes (``prefiltered``); both ways find the same hits.

    Args:
        words: each form and its replacement; the finder keeps it (made per response).
        lengths: the distinct lengths of the forms.
        joined: the forms joined by NUL characters, if the caller has them.
    """

    __slots__ = ("_automaton", "_lengths", "_prefixes", "_texts", "shortest")

    def __init__(self, words: dict[str, str], lengths: set[int], joined: str = "") -> None:
        texts, joined = words, joined or "\0".join(words)
        separated = joined.count("\0") == len(words) - 1  # no form holds a NUL
        if not separated or _escapes(joined):  # the common case: no form to escape
            texts = dict(words)
            for form in filter(_ESCAPED.search, words):
                escaped = json.dumps(form, ensure_ascii=False)[1:-1]
                texts.setdefault(escaped, words[form])
                lengths.add(len(escaped))
        self._texts = texts
        self.shortest = min(lengths)
        """The length of the shortest form: a shorter string holds none."""
        self._lengths = sorted(lengths, reverse=True)
        few = len(lengths) <= MAX_LENGTHS
        plain = texts is words and self.shortest >= MIN_TRACE  # joined: the texts, separated
        self._prefixes = _prefixes(texts, joined if plain else "") if few else set()
        self._automaton: ahocorasick.Automaton | None = None

    @property
    def cheap(self) -> bool:
        """Whether the prefilter searches: a few ``str.find`` passes, cheaper than measuring
        a column's strings to learn none is long enough to hold a form."""
        return bool(self._prefixes)

    def hits(self, text: str) -> list[Hit]:
        """Every occurrence of a form in ``text``, overlapping ones included."""
        if self._prefixes:
            budget = int(len(text) * CHECKS_PER_CHAR) + CHECKS_SLACK
            if self._automaton is None:
                budget += int(len(self._texts) * CHECKS_PER_FORM)
            found = prefiltered(text, self._texts, self._prefixes, self._lengths, budget)
            if found is not None:
                return found
        return self.automaton_hits(text)

    def automaton_hits(self, text: str) -> list[Hit]:
        """``hits`` by the automaton of every form, made on first use."""
        if self._automaton is None:
            self._automaton = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
            deque(map(self._automaton.add_word, self._texts), maxlen=0)
            self._automaton.make_automaton()
        texts, found = self._texts, []
        for end, length in self._automaton.iter(text):
            trace = text[end - length + 1 : end + 1]
            found.append((end, (trace, texts[trace])))
        return found


def _escapes(joined: str) -> bool:
    """Whether JSON escapes a character of ``joined`` other than its NUL separators."""
    if joined.isascii():  # a flag of the string: then one C pass deleting the plain bytes
        return bool(joined.encode("ascii").translate(None, _PLAIN_OR_NUL))
    return _ESCAPED_BUT_NUL.search(joined) is not None


def _prefixes(forms: dict[str, str], joined: str) -> set[str]:
    """The distinct ``MIN_TRACE``-character prefixes of ``forms``; none past ``MAX_PREFIXES``.

    ``joined`` is the forms joined by NUL characters, or empty if a form may hold a NUL or
    be shorter than a prefix. A prefix's forms are counted in it by one ``str.count``
    in C and the next prefix found by one regex search past the known ones: a few C passes
    for a few prefixes instead of a slice of every form (10,000 emails: 0.74 -> 0.29 ms).
    """
    if not joined:
        return _sliced(forms)
    known = [joined[:MIN_TRACE]]
    counted = 1 + joined.count("\0" + known[0])  # the first form has no NUL before it
    while counted < len(forms):
        if len(known) == MAX_PREFIXES:
            return set()
        other = re.compile("\0(?!" + "|".join(map(re.escape, known)) + ")").search(joined)
        if other is None:  # cannot be (each form is counted once): the plain way then
            return _sliced(forms)
        known.append(joined[other.end() : other.end() + MIN_TRACE])
        counted += joined.count("\0" + known[-1])
    return set(known)


def _sliced(forms: Iterable[str]) -> set[str]:
    """``_prefixes`` by a slice of every form."""
    found = set(map(_PREFIX, forms))
    return found if len(found) <= MAX_PREFIXES else set()


def prefiltered(
    text: str,
    forms: Mapping[str, str],
    prefixes: Iterable[str],
    lengths: list[int],
    budget: int,
) -> list[Hit] | None:
    """``Finder.hits`` found at each occurrence of a prefix of the forms, by their
    ``lengths`` (longest first); ``None`` once the text needs more than ``budget`` lookups."""
    found: list[Hit] = []
    size, count = len(text), len(lengths)
    for prefix in prefixes:
        at = text.find(prefix)
        while at >= 0:
            budget -= count
            if budget < 0:
                return None
            room = size - at
            for length in lengths:
                if length <= room:  # else the slice is cut short, and could be a shorter form
                    trace = text[at : at + length]
                    new = forms.get(trace)
                    if new is not None:
                        found.append((at + length - 1, (trace, new)))
            at = text.find(prefix, at + 1)
    return found


def finder_of(forms: dict[str, str], joined: str = "") -> Finder | None:
    """The finder of ``forms`` long enough to search for; ``None`` if there is none.

    ``joined`` is the forms joined by NUL characters, if the caller has it (``Finder``).
    """
    lengths = set(map(len, forms))
    if min(lengths, default=0) < MIN_TRACE:  # rare: every form fits, as a rule
        forms = {form: text for form, text in forms.items() if len(form) >= MIN_TRACE}
        lengths, joined = set(map(len, forms)), ""
    return Finder(forms, lengths, joined) if forms else None
