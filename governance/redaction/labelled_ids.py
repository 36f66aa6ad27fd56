"""Identifiers named by a label: "SSN: 123-45-6789", "Steuer-ID 12 345 678 901", "passport no.
C01X00T47", "IBAN DE89 3704 0044 0532 0130 00", "numéro client FR-22981", "口座番号 3452361".

The label (id_labels.py) says what the number is, so no check digit is needed. What follows the
label is read in steps: connecting words and signs are skipped ("number", "is", "lautet", ":",
"(BSN)", quotes); up to two other words may stand between label and value ("Pasaporte mexicano
G03606344", "SIRET du siège …"), four when a colon ends them ("Account number on the electricity
bill: …"), and then the value needs six digits; then one token of letters and digits (joined by
"-", ".", "/"), then more groups after single spaces while they hold digits ("12 345 678 901"), or
capitals followed by digits ("GB29 NWBK 6016 …"), or one closing capital ("AB 12 34 56 C").

The value must hold enough digits and must not be a date, a year, a version or an amount
("tax year 2023", "account balance: 12,450.00 EUR", "passport photo 35x45 mm" all survive).

A label also covers a second value of the same shape later in its sentence ("PESEL 60092793529,
then corrected to 73052392038"), and a table column it heads ("customer_no,segment\\nC1849451,…").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .findings import Candidate
from .id_labels import CJK_LABEL, LABEL, LABEL_STARTS, NUMBER_WORDS, may_start_label, subkind_of
from .scan import Scan

# Above cue-based account ids (70): a label read with its grouped value is the longer, better answer.
PRIORITY = 74

# Signs between a label and its value.
_SKIP_SIGNS = re.compile(
    r"""[ \t]*(?:["'’`*|]+|[:=#]|\([^()\n]{1,30}\)|[–—]|-(?=[ \t])|_|\.(?=[ \t])|"""
    r"""/[ \t]*[^\W\d_][^\W\d_.-]{1,15})[ \t]*"""  # a second label: "SSN/ITIN:", "CPF/CNPJ"
)
# Words between a label and its value: "number", "is", "lautet", "est", "jest", "är" …
_SKIP_WORD = re.compile(
    rf"[ \t]*(?:{NUMBER_WORDS}|is|was|are|were|reads|lautet|lautete|ist|war|lauten|est|était|es|era|è|é|"
    r"jest|wynosi|to|är|var|er|on|luidt|zijn|de|da|do|del|du|di)(?![^\W_])[ \t]*",
    re.IGNORECASE,
)
# Another word between label and value (an adjective, a company, "of the account").
# Not capitals right before digits: they start the value ("QQ 12 34 56 C").
_FILLER = re.compile(r"[ \t]*(?![A-Z]{1,4}[ \t]+\d)([^\W\d_][^\W\d_'’.-]{0,15})(?=[ \t]*[ \t:])[ \t]*")
# Words after a label that say the number is not the labelled identifier but a count, a date,
# a size or an amount ("account created 20240315", "customer count 1200000").
_NOT_FILLERS = frozenset(
    """
    since until from created opened closed updated expires expired valid balance total limit count size
    has had have holds with grew reached age year years date dated amount photo holder holders page pages
    fee fees rows records users count total sum ends ending last first
    """.split()
)
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[./-](?=[A-Za-z0-9]))*")
# A further group after one space: digits in it, or capitals followed by another group, or a
# single closing capital.
_GROUP = re.compile(
    r" (?:(?=[A-Z]*\d)[A-Z0-9]{1,12}(?:-[A-Z0-9]{1,8})*|[A-Z]{2,4}(?= [A-Z]{0,3}\d)|[A-Z](?![\w-]))"
)
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}([./])\d{1,2}\1\d{2,4}|\d{4}/\d{1,2}/\d{1,2}")
_COMPACT_DATE = re.compile(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
_YEAR = re.compile(r"(?:19|20)\d{2}(?:[/-](?:\d{2}|(?:19|20)\d{2}))?")
_VERSION = re.compile(r"[vV]?\d{1,3}(?:\.\d{1,3}){1,3}")
_AMOUNT = re.compile(r"\d{1,3}(?:[.,']\d{3})+(?:[.,]\d{1,2})?|\d+[.,]\d{2}")
# After the value: a unit, a currency or a percentage says it is a quantity.
_QUANTITY_AFTER = re.compile(
    r"[ \t]*(?:%|€|\$|£|¥|₽|(?:eur|usd|gbp|chf|pln|sek|nok|dkk|mm|cm|km|kg|mb|gb|kb|ms|px|"
    r"days?|hours?|users?|items?|times?|years?|months?|pages?|characters?|chars?|digits?|rows?|records?|"
    r"customers?|accounts?|members?|requests?)(?![^\W_]))",
    re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(r"[€$£¥]\s*$|\b(?:EUR|USD|GBP|CHF)\s*$")
# Where a sentence ends, for a second value under the same label.
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")
_CELL_SEPARATORS = ",;\t|"
# Labels that are also everyday words: the value needs six digits.
_WEAK_LABELS = frozenset("account acct savings checking konto conta cuenta hesap".split())
# Labels that name a document written with letters and digits; a number alone is something else.
_LETTERED_LABELS = frozenset({"RFC", "Pass"})
# A value right before a label: "123-45-6789 (SSN)", "X1234567 is her passport number".
_VALUE_BEFORE = re.compile(
    r"(?P<value>[A-Z0-9](?:[A-Z0-9]|[ ./-](?=[A-Z0-9]))*[A-Z0-9])[ \t]*"
    r"(?:\([ \t]*|[ \t]+(?:is|was|as|=)[ \t]+(?:(?:my|his|her|their|the|our|your|its|a|an)[ \t]+)?)$"
)
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"(?<![^\W_])[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for label in _labels(text):
        subkind = subkind_of(label)
        found = _value_after(text, label.end())
        name = label.group()
        if found is None or not _is_identifier(
                text, found[0], found[1], subkind, fillers=found[2], label=name):
            found = _value_before(text, label.start())
            if found is None or not _is_identifier(text, found[0], found[1], subkind, label=name):
                continue
        start, end, _ = found
        rule = f"{subkind}_label"
        yield Candidate("id", start, end, rule, PRIORITY)
        for more_start, more_end in _same_shape_later(text, start, end):
            yield Candidate("id", more_start, more_end, rule, PRIORITY)
    if any(sep in text for sep in _CELL_SEPARATORS) and "\n" in text:
        yield from _table_columns(text)


def _labels(text: str) -> Iterator[re.Match[str]]:
    """The labels in `text` that have a digit near them.

    Trying the label pattern (a few hundred alternatives) only at word starts whose first letters
    can start a label and that a digit follows soon is far faster than searching the text with it.
    """
    runs = [m.span() for m in _DIGITS.finditer(text)]
    if not runs:
        return
    run_ends = [end for _, end in runs]
    one, two, three = LABEL_STARTS
    words = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
    last_end = 0
    for position, word in words:
        if position < last_end or not (word in one or word[:2] in two or word[:3] in three):
            continue  # may_start_label, inlined: this loop runs for every word of the text
        # A digit up to 120 characters after the label, or 60 before it ("X1234567 (passport)").
        i = bisect.bisect_left(run_ends, position - 59)
        if i == len(runs) or runs[i][0] - position > 120:
            continue
        label = LABEL.match(text, position)
        if label:
            last_end = label.end()
            yield label
    if _CJK.search(text):
        yield from CJK_LABEL.finditer(text)


def _value_after(text: str, position: int) -> tuple[int, int, int] | None:
    """(start, end, words skipped) of the value after a label ending at `position`, or None."""
    fillers = 0
    for _ in range(10):
        step = _SKIP_SIGNS.match(text, position) or _SKIP_WORD.match(text, position)
        if step and step.end() > position:
            position = step.end()
            continue
        filler = _FILLER.match(text, position)
        if not filler or fillers >= 4 or filler.group(1).lower() in _NOT_FILLERS:
            break
        fillers += 1
        position = filler.end()
    if fillers > 2 and not text[:position].rstrip().endswith(":"):
        return None
    if position < len(text) and text[position] in " \t":
        position += 1
    token = _TOKEN.match(text, position)
    if not token:
        return None
    end = token.end()
    while group := _GROUP.match(text, end):
        end = group.end()
    return position, end, fillers


def _value_before(text: str, label_start: int) -> tuple[int, int, int] | None:
    """The value that a label follows: "123-45-6789 (SSN)", "X1234567 is her passport number"."""
    window_start = max(0, label_start - 60)
    before = _VALUE_BEFORE.search(text, window_start, label_start)
    if not before:
        return None
    start, end = before.span("value")
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "-/_."):
        return None
    return start, end, 0


def _is_identifier(
    text: str, start: int, end: int, subkind: str, *, fillers: int = 0, label: str = ""
) -> bool:
    value = text[start:end]
    digits = sum(ch.isdigit() for ch in value)
    letters = sum(ch.isalpha() for ch in value)
    if label.lower() in _WEAK_LABELS and digits < 6:
        return False  # "savings 1200 last year", "account 2048"
    if label in _LETTERED_LABELS and not letters:
        return False  # "RFC 7231" is a standard; a Mexican RFC holds letters ("GODE561231GR8")
    # Passports and identity cards mix capitals and digits ("P52KHP6GZ"); other numbers are digits.
    document = subkind in ("passport", "national_id") and letters and digits and digits + letters >= 8
    if digits < 4 and not document and not (subkind == "passport" and digits >= 2 and digits + letters >= 6):
        return False
    if fillers and digits < 6:
        return False
    if digits + letters > 40:
        return False
    # A lower-case letter means a word or a code identifier, except a Chilean RUT's check "k".
    if any(ch.islower() for ch in value[:-1]) or (value[-1].islower() and value[-1] != "k"):
        return False
    if _DATE.fullmatch(value) or _COMPACT_DATE.fullmatch(value):
        return False
    if _YEAR.fullmatch(value) or _VERSION.fullmatch(value) or _AMOUNT.fullmatch(value):
        return False
    if _CURRENCY_BEFORE.search(text, max(0, start - 6), start):
        return False
    return not _QUANTITY_AFTER.match(text, end)


def _shape(value: str) -> str:
    return re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", value))


def _same_shape_later(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Values later in the same sentence with the labelled value's exact shape (6+ digits)."""
    value = text[start:end]
    if sum(ch.isdigit() for ch in value) < 6:
        return
    stop = _SENTENCE_END.search(text, end)
    limit = min(stop.start() if stop else len(text), end + 120)
    shape = _shape(value)
    for token in _TOKEN.finditer(text, end, limit):
        other_end = token.end()
        while group := _GROUP.match(text, other_end):
            other_end = group.end()
        if _shape(text[token.start():other_end]) == shape and _boundary(text, token.start(), other_end):
            yield token.start(), other_end


def _boundary(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before in "-/_") and not (after.isalnum() or after in "-/_")


def _table_columns(text: str) -> Iterator[Candidate]:
    """Values under a header cell that is a label, in CSV-like lines ("passport,checkin\\n…")."""
    lines = text.split("\n")
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    for index, line in enumerate(lines):
        separator = next((sep for sep in _CELL_SEPARATORS if line.count(sep) >= 1), None)
        if separator is None:
            continue
        # A header has a row under it with as many cells.
        if index + 1 == len(lines) or lines[index + 1].count(separator) != line.count(separator):
            continue
        cells = line.split(separator)
        columns = {}
        for number, cell in enumerate(cells):
            # The first cell may follow a caption: "crm_export.csv: customer_no,segment".
            name = cell.rsplit(": ", 1)[-1].strip().strip("\"'")
            first_word = _WORD.match(name)
            if not first_word or not may_start_label(first_word.group()):
                continue
            label = LABEL.fullmatch(name)
            if label:
                columns[number] = subkind_of(label)
        if not columns:
            continue
        for row_index in range(index + 1, len(lines)):
            row = lines[row_index].split(separator)
            if len(row) != len(cells):
                break
            cell_start = offsets[row_index]
            for number, cell in enumerate(row):
                if number in columns:
                    stripped = cell.strip().strip("\"'")
                    start = cell_start + cell.find(stripped)
                    end = start + len(stripped)
                    subkind = columns[number]
                    if stripped and _TOKEN.fullmatch(stripped) and _is_identifier(text, start, end, subkind):
                        yield Candidate("id", start, end, f"{subkind}_column", PRIORITY)
                cell_start += len(cell) + 1
