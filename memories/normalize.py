"""Normalisation applied to every storage-bound text (README.md, "The memory entry").

Pure functions: trim, single internal spaces, canonical phrases and tags lowercased,
titles keep their casing. Content keeps its line structure and leading indentation,
because memories often carry code snippets whose indentation is meaning.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_SPACES = re.compile(r"\s+")
_INLINE_SPACES = re.compile(r"[ \t\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def clean_line(text: str) -> str:
    """Trim and fold every run of white space (newlines included) to one space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def clean_content(text: str) -> str:
    """Trim, fold spaces inside lines, keep indentation and at most one blank line."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = []
    for line in text.split("\n"):
        stripped = line.rstrip()
        body = stripped.lstrip(" \t")
        indent = stripped[: len(stripped) - len(body)].replace("\t", "    ")
        lines.append(indent + _INLINE_SPACES.sub(" ", body))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def clean_phrases(phrases: Iterable[str]) -> list[str]:
    """Canonical phrases: cleaned, lowercased, empty and repeated ones dropped."""
    return _dedupe(clean_line(phrase).lower() for phrase in phrases)


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags: cleaned, lowercased, inner spaces as hyphens, repeats dropped."""
    return _dedupe(clean_line(tag).lower().replace(" ", "-") for tag in tags)


def clean_strings(items: Iterable[str]) -> list[str]:
    return _dedupe(clean_line(item) for item in items)
