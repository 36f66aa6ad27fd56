"""Identifiers named by a label: "SSN: 123-45-6789", "Steuer-ID 12 345 678 901", "passport no.
C01X00T47", "IBAN DE89 3704 0044 0532 0130 00", "sort code 12-34-56", "numéro client FR-22981".

The label (id_labels.py) says what the number is, so no check digit is needed. What follows the
label is read in three steps: connecting words and signs are skipped ("number", "is", "lautet",
":", "(BSN)", quotes), then one token of letters and digits (joined by "-", ".", "/"), then more
groups after single spaces while they hold digits ("12 345 678 901"), or capitals followed by
digits ("GB29 NWBK 6016 …"), or one closing capital ("AB 12 34 56 C").

The value must hold enough digits and must not be a date, a year, a version or an amount
("tax year 2023", "account balance: 12,450.00 EUR", "passport photo 35x45 mm" all survive).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import Candidate
from .id_labels import LABEL, NUMBER_WORDS, subkind_of
from .scan import Scan

# Above cue-based account ids (70): a label read with its grouped value is the longer, better answer.
PRIORITY = 74

# Signs between a label and its value.
_SKIP_SIGNS = re.compile(
    r"""[ \t]*(?:["'’`*|]+|[:=#]|\([^()\n]{1,30}\)|[–—]|-(?=[ \t])|_|\.(?=[ \t]))[ \t]*"""
)
# Words between a label and its value: "number", "is", "lautet", "est", "jest", "är" …
_SKIP_WORD = re.compile(
    rf"[ \t]*(?:{NUMBER_WORDS}|is|was|are|were|reads|lautet|lautete|ist|war|lauten|est|était|es|era|è|é|"
    r"jest|wynosi|to|är|var|er|on|luidt|zijn|de|da|do|del|du|di)(?![^\W_])[ \t]*",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[./-](?=[A-Za-z0-9]))*")
# A further group after one space: digits in it, or capitals followed by another group, or a
# single closing capital.
_GROUP = re.compile(
    r" (?:(?=[A-Z]*\d)[A-Z0-9]{1,8}(?:-[A-Z0-9]{1,8})*|[A-Z]{2,4}(?= [A-Z]{0,3}\d)|[A-Z](?![\w-]))"
)
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}([./])\d{1,2}\1\d{2,4}|\d{4}/\d{1,2}/\d{1,2}")
_YEAR = re.compile(r"(?:19|20)\d{2}(?:[/-](?:\d{2}|(?:19|20)\d{2}))?")
_VERSION = re.compile(r"[vV]?\d{1,3}(?:\.\d{1,3}){1,3}")
_AMOUNT = re.compile(r"\d{1,3}(?:[.,']\d{3})+(?:[.,]\d{1,2})?|\d+[.,]\d{2}")
# After the value: a unit, a currency or a percentage says it is a quantity.
_QUANTITY_AFTER = re.compile(
    r"[ \t]*(?:%|€|\$|£|¥|(?:eur|usd|gbp|chf|pln|sek|nok|dkk|mm|cm|km|kg|mb|gb|kb|ms|px|"
    r"days?|hours?|users?|items?|times?|years?|months?|pages?|characters?|chars?|digits?)(?![^\W_]))",
    re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(r"[€$£¥]\s*$|\b(?:EUR|USD|GBP|CHF)\s*$")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for label in LABEL.finditer(text):
        value = _value_after(text, label.end())
        if value is None:
            continue
        start, end = value
        if _is_identifier(text, start, end, subkind_of(label)):
            yield Candidate("id", start, end, f"{subkind_of(label)}_label", PRIORITY)


def _value_after(text: str, position: int) -> tuple[int, int] | None:
    """The span of the value that follows a label ending at `position`, or None."""
    for _ in range(6):
        step = _SKIP_SIGNS.match(text, position) or _SKIP_WORD.match(text, position)
        if not step or step.end() == position:
            break
        position = step.end()
    if position < len(text) and text[position] in " \t":
        position += 1
    token = _TOKEN.match(text, position)
    if not token:
        return None
    end = token.end()
    while group := _GROUP.match(text, end):
        end = group.end()
    return position, end


def _is_identifier(text: str, start: int, end: int, subkind: str) -> bool:
    value = text[start:end]
    digits = sum(ch.isdigit() for ch in value)
    letters = sum(ch.isalpha() for ch in value)
    if digits < 4 and not (subkind == "passport" and digits >= 2 and digits + letters >= 6):
        return False
    if digits + letters > 40:
        return False
    # A lower-case letter means a word or a code identifier, except a Chilean RUT's check "k".
    if any(ch.islower() for ch in value[:-1]) or (value[-1].islower() and value[-1] != "k"):
        return False
    if subkind != "account_number" and _DATE.fullmatch(value):
        return False  # "sort code 12-34-56" has a date's shape; other labels before a date do not
    if _YEAR.fullmatch(value) or _VERSION.fullmatch(value) or _AMOUNT.fullmatch(value):
        return False
    if _CURRENCY_BEFORE.search(text, max(0, start - 6), start):
        return False
    return not _QUANTITY_AFTER.match(text, end)
