"""Numbers passed on one digit at a time: "nine two oh two, two oh four, seven two oh oh eight
two", "5 6 1 0 7 4 2 8 3", "0 1 2 3, 8 4 7 5, 9 1".

Voice transcripts spell digits out, and people who want a number read back without a mistake type
it digit by digit. The other recognizers read numbers as runs of digits, so a number written
either way escapes all of them (a label or not). Eight digits or more given one by one are a
number someone means to pass on; they are redacted on that shape alone, wherever they are.

Which kind: a phone number when a phone word ("call", "mobile", "whatsapp me on") comes earlier
in the line, an identifier otherwise. Not in code, and not a run of 0s and 1s or a bracketed list
("[0 1 1 0 1 0 0 1]", a bit mask or an array printed by a program).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

from .findings import Candidate
from .phones import PHONE_CONTEXT
from .scan import Scan

# Above phones (60): a digit-by-digit run that libphonenumber also reads as some country's phone
# is an identifier unless a phone word says otherwise. Below labelled ids (74), whose value may
# hold the run.
PRIORITY = 62
# Fewer digits are too often something else read out (a PIN, a time, a count to five).
MIN_DIGITS = 8

_WORD = r"(?:zero|oh|nought|nil|one|two|three|four|five|six|seven|eight|nine)"
# "double seven", "triple oh": the digit twice or three times.
_SPOKEN_DIGIT = rf"(?:(?:double|triple)[ \t]+)?{_WORD}"
# Between two digits: spaces, a comma or a dash between groups, a pause written as dots.
_SPOKEN_GAP = r"(?:[ \t]*(?:,|-|–|—|\.\.\.|…)[ \t]*|[ \t]+)"
_SPOKEN_RUN = re.compile(rf"(?<![^\W_]){_SPOKEN_DIGIT}(?:{_SPOKEN_GAP}{_SPOKEN_DIGIT})+(?![^\W_])",
                         re.IGNORECASE)
_SPOKEN_ONE = re.compile(rf"(?:(double|triple)[ \t]+)?({_WORD})", re.IGNORECASE)
_VALUES = {"zero": "0", "oh": "0", "nought": "0", "nil": "0", "one": "1", "two": "2", "three": "3",
           "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_REPEATS = {"double": 2, "triple": 3}
# Single digits after single spaces, in groups parted by a comma, a dash or a slash.
_TYPED_RUN = re.compile(r"(?<![\w.,/-])\d(?:(?: |, | ?[-/] ?)\d)+(?![\w]|[.,]\d)")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for match in _SPOKEN_RUN.finditer(text):
        spoken = _spoken(match.group())
        if sum(times for _, times in spoken) >= MIN_DIGITS and not _counting([digit for digit, _ in spoken]):
            yield _candidate(scan, match.start(), match.end(), "spoken_digits")
    if not re.search(r"\d \d", text):
        return
    for match in _TYPED_RUN.finditer(text):
        digits = [ch for ch in match.group() if ch.isdigit()]
        if len(digits) < MIN_DIGITS or set(digits) <= {"0", "1"} or _counting(digits):
            continue
        if scan.code.overlaps(match.start(), match.end()) or _bracketed(text, match.start(), match.end()):
            continue
        yield _candidate(scan, match.start(), match.end(), "digit_by_digit")


def _spoken(run: str) -> list[tuple[str, int]]:
    """Each spoken digit of `run` with how many times it counts ("double seven": ("7", 2))."""
    return [(_VALUES[m.group(2).lower()], _REPEATS.get((m.group(1) or "").lower(), 1))
            for m in _SPOKEN_ONE.finditer(run)]


def _counting(digits: list[str]) -> bool:
    """One, two, three …: counting, not a number."""
    steps = {(int(b) - int(a)) % 10 for a, b in pairwise(digits)}
    return steps in ({1}, {9})


def _candidate(scan: Scan, start: int, end: int, rule: str) -> Candidate:
    line_start = scan.text.rfind("\n", 0, start) + 1
    kind = "phone" if PHONE_CONTEXT.search(scan.text, line_start, start) else "id"
    return Candidate(kind, start, end, rule, PRIORITY)


def _bracketed(text: str, start: int, end: int) -> bool:
    """Inside brackets that hold only the run: an array or a list printed by a program."""
    before = text[max(0, start - 8):start].rstrip(" \t")
    after = text[end:end + 8].lstrip(" \t")
    return before.endswith(("[", "(", "{")) and after.startswith(("]", ")", "}"))
