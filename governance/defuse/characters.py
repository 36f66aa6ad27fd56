"""Invisible characters and bidi controls: removed, except where a script or an emoji needs
them.

Zero-width characters, Unicode TAG characters and variation selectors can carry text a
reader never sees ("ASCII smuggling": each TAG character mirrors one ASCII letter), and bidi
overrides make text read differently from how it is stored (the "Trojan Source" trick). What
stays, because ordinary text needs it: a zero-width joiner or non-joiner between two letters
of a script that joins (Persian, Arabic, Indic) or inside an emoji sequence; a single
variation selector after a visible character; the TAG letters of a subdivision flag
(🏴 + tags + cancel tag); a single LRM/RLM/ALM mark beside a letter, digit or punctuation.
Line and paragraph separators (U+2028, U+2029) become newlines; other control characters
go, except tab, newline and carriage return.
"""

from __future__ import annotations

import re
import unicodedata

ZWNJ, ZWJ = "\u200c", "\u200d"
BLACK_FLAG = "\U0001F3F4"
CANCEL_TAG = "\U000E007F"
# Always invisible, never needed by ordinary text of the languages SAM holds.
ZERO_WIDTH = frozenset("\u200b\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u00ad\u034f\u115f\u1160\u3164\uffa0"
                       "\u17b4\u17b5\u2800")
# Embeddings, overrides and isolates: they reorder what follows.
BIDI_FORMATTING = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Marks: they only set the direction of neutral characters beside them.
BIDI_MARKS = frozenset("\u200e\u200f\u061c")
_TAG = re.compile("[\U000E0000-\U000E007F]")
_FLAG = re.compile(BLACK_FLAG + "[\U000E0020-\U000E007E]{1,8}" + CANCEL_TAG)


def _is_variation_selector(char: str) -> bool:
    return "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"


def _ideograph(char: str) -> bool:
    return bool(char) and unicodedata.name(char, "").startswith("CJK")


def hidden_text(text: str) -> str:
    """What TAG characters and variation-selector runs spell, when they spell something:
    TAG characters mirror ASCII, and selectors VS1-VS256 stand for the bytes 0-255."""
    text = _FLAG.sub("", text)  # a subdivision flag's tags spell its region, nothing more
    tags = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    data = bytearray()
    for char in text:
        code = ord(char)
        if 0xFE00 <= code <= 0xFE0F:
            data.append(code - 0xFE00)
        elif 0xE0100 <= code <= 0xE01EF:
            data.append(code - 0xE0100 + 16)
    selectors = data.decode("utf-8", errors="ignore") if len(data) > 2 else ""
    return " ".join(part for part in (tags, selectors) if part.strip())


def _joins(char: str) -> bool:
    """A character beside which a joiner can be ordinary: a non-ASCII letter or mark, or a
    symbol (emoji and their modifiers)."""
    if not char or char.isascii():
        return False
    category = unicodedata.category(char)
    return category[0] in "LM" or category in ("So", "Sk") or _is_variation_selector(char)


def _visible(char: str) -> bool:
    return bool(char) and not char.isspace() and unicodedata.category(char)[0] != "C" \
        and not _is_variation_selector(char)


# Every character `clean` may drop or change (control and format characters, selectors,
# fillers, tags): text with none of them, most text, is returned as it is without a walk.
_SUSPECT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\ud800-\udfff\U000110bd\U000110cd\U0001bca0-\U0001bca3\U00013430-\U0001343f\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]")


def clean(text: str, *, in_code: bool = False) -> tuple[str, list[str]]:
    """`text` without hidden characters; the findings name what went (`invisible`, `tag_chars`,
    `bidi`, `control`). In code every bidi control goes, marks included: there they can only
    disguise what the code does."""
    if not _SUSPECT.search(text):
        return text, []
    findings: set[str] = set()
    flags = {m.start(): m.end() for m in _FLAG.finditer(text)}
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        if index in flags:  # a subdivision flag keeps its tags
            out.append(text[index:flags[index]])
            index = flags[index]
            continue
        char = text[index]
        before = out[-1][-1] if out and out[-1] else ""
        after = text[index + 1] if index + 1 < length else ""
        if _TAG.match(char):
            findings.add("tag_chars")
        elif char in ZERO_WIDTH:
            findings.add("invisible")
        elif char in (ZWJ, ZWNJ):
            if _joins(before) and _joins(after) and not in_code:
                out.append(char)
            else:
                findings.add("invisible")
        elif _is_variation_selector(char):
            # One selector after a visible character (❤️, 1️⃣, an ideographic variant); a
            # run of them, or one after a space, carries hidden bytes.
            alone = (_visible(before) and not _is_variation_selector(before)
                     and not _is_variation_selector(after))
            if alone and (char in "\ufe0e\ufe0f" or ("\ufe00" <= char <= "\ufe0d" and not in_code)
                          or _ideograph(before)):
                out.append(char)
            else:
                findings.add("invisible")
        elif char in BIDI_FORMATTING:
            findings.add("bidi")
        elif char in BIDI_MARKS:
            if not in_code and (_visible(before) or _visible(after)) and after not in BIDI_MARKS \
                    and before not in BIDI_MARKS:
                out.append(char)
            else:
                findings.add("bidi")
        elif char in "\u2028\u2029":
            out.append("\n")
            findings.add("control")
        elif char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf", "Cs"):
            findings.add("control" if unicodedata.category(char) != "Cf" else "invisible")
        else:
            out.append(char)
        index += 1
    return "".join(out), sorted(findings)
