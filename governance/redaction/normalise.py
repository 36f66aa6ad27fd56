"""The text the recognizers read: NFKC-normalised, without invisible characters, mapped back to the original.

Fullwidth letters (`ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ`), a zero-width space inside an address
(`bob\u200b@example.com`), bidi controls and non-breaking spaces between the digits of a phone
number all hide personal data from patterns written for plain text. The recognizers therefore
read a normalised copy: each character NFKC-normalised (fullwidth forms become ASCII, no-break and
other typographic spaces become " "), Unicode hyphens and the minus sign become "-", and
zero-width characters, soft hyphens and bidi controls are removed.

Only detection uses the copy. Every finding is mapped back to the original text, and redaction
replaces that original span, so the text stored is the original with findings replaced: text
outside a finding (CJK punctuation, ligatures, emoji joined by ZWJ) is kept exactly as written,
and a finding's offsets index the original text.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

# Zero-width characters, the soft hyphen, the Mongolian vowel separator, invisible operators,
# the byte-order mark, and the bidi marks, embeddings, overrides and isolates.
_INVISIBLE = frozenset(
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
# Hyphens NFKC leaves alone (U+2011 becomes U+2010) that a phone number or an address may use.
_HYPHENS = str.maketrans({"\u2010": "-", "\u2012": "-", "\u2212": "-", "\ufe63": "-"})
# Decimal digits of other scripts (Arabic-Indic, Persian, Devanagari, Bengali, Thai …): an
# identifier written in them ("٢٩٢٠٨١٧٠١٠٤٥٧٣") is read as the ASCII digits it stands for.
_OTHER_DIGITS = {ch: str(unicodedata.digit(ch)) for ch in map(chr, range(0x660, 0x1000))
                 if unicodedata.category(ch) == "Nd"}
# A run of characters that may need work: anything outside ASCII, with the ASCII character before
# it, which a combining mark in the run may modify ("e" + U+0301 becomes "é").
_DIRTY = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


@dataclass(frozen=True)
class Normalised:
    """`text` as the recognizers read it, and how to map its offsets back to `original`.

    Each piece is (start in text, start in original, end in original, identity): an identity
    piece maps character for character; another piece is one normalised group (a base character
    and its combining marks) whose characters all map to the whole group.
    """

    text: str
    original: str
    _starts: tuple[int, ...] = ()
    _pieces: tuple[tuple[int, int, int, bool], ...] = ()

    @property
    def identity(self) -> bool:
        return not self._pieces

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The span of `original` that text[start:end] came from (start < end)."""
        if self.identity:
            return start, end
        return self._map(start, is_end=False), self._map(end - 1, is_end=True)

    def _map(self, index: int, *, is_end: bool) -> int:
        piece_start, original_start, original_end, identity = self._pieces[
            bisect.bisect_right(self._starts, index) - 1]
        if identity:
            return original_start + index - piece_start + (1 if is_end else 0)
        return original_end if is_end else original_start


def normalise(text: str) -> Normalised:
    """The normalised copy of `text`; ASCII text (the common case) is returned as it is."""
    if text.isascii():
        return Normalised(text=text, original=text)
    parts: list[str] = []
    pieces: list[tuple[int, int, int, bool]] = []
    length = 0  # of the normalised text so far
    position = 0  # in the original text
    for match in _DIRTY.finditer(text):
        if match.start() > position:  # an ASCII stretch: unchanged
            _add_identity(pieces, length, position, match.start())
            parts.append(text[position:match.start()])
            length += match.start() - position
        for group_start, group in _groups(match.group(), match.start()):
            normalised = _normalise_group(group)
            if normalised == group and len(group) == 1:
                _add_identity(pieces, length, group_start, group_start + 1)
            elif normalised:
                pieces.append((length, group_start, group_start + len(group), False))
            parts.append(normalised)
            length += len(normalised)
        position = match.end()
    if position < len(text):
        _add_identity(pieces, length, position, len(text))
        parts.append(text[position:])
    normalised_text = "".join(parts)
    if normalised_text == text:
        return Normalised(text=text, original=text)
    return Normalised(text=normalised_text, original=text,
                      _starts=tuple(p[0] for p in pieces), _pieces=tuple(pieces))


def _add_identity(pieces: list[tuple[int, int, int, bool]], start: int, original_start: int,
                  original_end: int) -> None:
    """Append an unchanged stretch, merged into the previous piece when that one continues it."""
    if pieces:
        last_start, last_original_start, last_original_end, identity = pieces[-1]
        if identity and last_original_end == original_start and \
                last_start + last_original_end - last_original_start == start:
            pieces[-1] = (last_start, last_original_start, original_end, True)
            return
    pieces.append((start, original_start, original_end, True))


def _groups(run: str, offset: int) -> list[tuple[int, str]]:
    """`run` cut into a base character and the combining marks after it, with original offsets."""
    groups: list[tuple[int, str]] = []
    for i, ch in enumerate(run):
        if groups and unicodedata.combining(ch) and ch not in _INVISIBLE:
            start, group = groups[-1]
            groups[-1] = (start, group + ch)
        else:
            groups.append((offset + i, ch))
    return groups


def _normalise_group(group: str) -> str:
    if group in _INVISIBLE:
        return ""
    normalised = unicodedata.normalize("NFKC", group).translate(_HYPHENS)
    return _OTHER_DIGITS.get(normalised, normalised)
