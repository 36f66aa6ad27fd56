"""What every recognizer needs to know about a text besides its characters.

Code spans and URLs are computed once per text. Recognizers of contextual kinds (names, mentions,
addresses, phones) skip them, because a capitalised word in a backtick span is an identifier and
the digits in a URL path are not a phone number. Emails and secrets are still found there: a key
pasted into a code block is as leaked as one in prose.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property

from .findings import PLACEHOLDERS

# Fenced blocks first, so the backticks of a fence are not read as inline spans.
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS.values()))


class Spans:
    """A set of [start, end) spans (merged where they overlap) with a fast overlap test."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self._ends, start + 1)
        return i < len(self._starts) and self._starts[i] < end

    def __bool__(self) -> bool:
        return bool(self._starts)


class Scan:
    """A text plus lazily computed regions (code, URLs, placeholders) shared by the recognizers."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def code(self) -> Spans:
        return Spans([m.span() for m in _CODE.finditer(self.text)])

    @cached_property
    def urls(self) -> Spans:
        return Spans([m.span() for m in _URL.finditer(self.text)])

    @cached_property
    def placeholders(self) -> Spans:
        return Spans([m.span() for m in _PLACEHOLDER.finditer(self.text)])

    def line_before(self, index: int, limit: int = 80) -> str:
        """The text on the same line before `index`, at most `limit` characters."""
        line_start = self.text.rfind("\n", 0, index) + 1
        return self.text[max(line_start, index - limit):index]

    def line_after(self, index: int, limit: int = 80) -> str:
        line_end = self.text.find("\n", index)
        if line_end < 0:
            line_end = len(self.text)
        return self.text[index:min(line_end, index + limit)]
