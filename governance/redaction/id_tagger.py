"""A learned second opinion on numbers: is this one a personal or financial identifier?

The label rules (labelled_ids.py, id_labels.py) know the labels and layouts someone has written
down; six rounds of them lifted sets written apart by 0.00–0.03 each, because every new set brings
labels and layouts no rule knows. This tagger reads what a rule cannot list: the shape of a
number (how many digits and letters, in which pattern, grouped or not, with which separators)
and the words around it (the nearest words before it whole and in four-letter pieces, so
"Versichertennummer", "numéro" and "nummeret" share evidence; the words after it; the line above
a value that starts its line, as in a form). It is a logistic regression over hashed features,
trained on the labelled tuning sets (bench/train_id_tagger.py), and it only adds findings: what
the rules find stays found. The one exception is a number the phone rules read as some country's
phone by its shape alone, with no phone word near it ("numer PESEL … to 03271804577"): the
tagger, which learns from phones as negatives, may take it over (phones_taken_over).

Candidates are tokens holding four digits or more, with the groups that follow them ("12 345 678
901"); one is redacted as `id` when the model gives it more than THRESHOLD. The threshold is set
high (0.95) because numbers the tuning sets did not show are mostly not identifiers: across
SAM's own docs and a sample of Django's source, no candidate reaches 0.9.

The weights ship with SAM (governance/redaction/data/id_tagger.npz): the indices of the hashed
features that carry a weight, and their weights.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
from stdnum import iso11649, lei

from .findings import Candidate
from .labelled_ids import groups_end, reads_as_identifier
from .phones import CLAUSE_AFTER, PHONE_CONTEXT
from .scan import Scan

MODEL_PATH = Path(__file__).parent / "data" / "id_tagger.npz"
# Below phones (60), addresses (55) and names (50): a number they explain is theirs.
PRIORITY = 45
THRESHOLD = 0.95
# Hashed feature space: 2^20 buckets, few enough collisions for ~15,000 features in use.
DIMENSIONS = 1 << 20
MIN_DIGITS = 4

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[./-](?=[A-Za-z0-9]))*")
_WORD = re.compile(r"[^\W\d_]+")
_DIGIT = re.compile(r"\d")
_TWO_DIGITS = re.compile(r"\d\D*\d")
_RUN = re.compile(r"(.)\1+")
_WINDOW_BEFORE = 80
_WORDS_BEFORE = 6
_NEAR = 2  # the nearest words before a value weigh apart from the further ones
_WORDS_AFTER = 3
_LINE_ABOVE = 60
# Pieces of phone words in many languages, inside compounds too ("Rufnummer", "Llámame",
# "Telefonnummer", "celular", "Diensthandy"): near one, a number stays the phone recognizer's.
# Most must start a word: "Stelle", "Hotel", "Beruf", "recall" and "yentela" say nothing of phones.
_PHONE_WORD_PIECE = re.compile(
    r"phon|fon|handy|(?<![^\W\d_])(?:tel|mobil|m[oó]vil|celu|portable|ruf|call|ll[aá]m|cell|whats|sms|fax|"
    r"hotline|contact|kontakt|dial|ring)",
    re.IGNORECASE)
# "Number" naming what it is the number of ("número da instalação", "die Nummer von meiner
# Stromrechnung") is no phone cue, though a bare "número" or "Nummer" is one.
_NUMBER_OF = re.compile(r"(?:numéro|número|nummer)(?=[ \t]+(?:de|da|do|des|du|von|vom|der)\b)", re.IGNORECASE)
# Numbers the rules leave alone on purpose, whatever the tagger makes of them: a bank's routing
# code on its own (it names a branch, docs/redaction.md), a one-time or recovery code, a card a
# line calls a test card.
_LEFT_ALONE = (
    r"\b(?:sort[ \t_-]*code|routing|bsb|aba|ifsc|swift|bic|recovery|backup|verification|security|otp|"
    r"pin|passcode|password|reset|confirmation|test[ \t_-]*cards?|sandbox|fixtures?|dummy|fake|example)\b"
)
_LEFT_ALONE_BEFORE = re.compile(_LEFT_ALONE + r"[^\n]{0,30}$", re.IGNORECASE)  # on the value's line
_LEFT_ALONE_WORD = re.compile(_LEFT_ALONE, re.IGNORECASE)  # anywhere on the line above


def candidates(text: str) -> list[tuple[int, int]]:
    """Spans of tokens with two digits or more, with the groups after them, four digits in all."""
    spans: list[tuple[int, int]] = []
    last_end = -1
    for token in _TOKEN.finditer(text):
        if token.start() < last_end or not _TWO_DIGITS.search(token.group()):
            continue
        end = groups_end(text, token.end())
        if len(_DIGIT.findall(text, token.start(), end)) >= MIN_DIGITS:
            spans.append((token.start(), end))
            last_end = end
    return spans


def features(text: str, start: int, end: int) -> list[int]:
    """The hashed features of the candidate text[start:end], by name: the value's own ("nd=",
    "nl=", "sh=", "grouped", "sep-", "p2=", "lower"), the words before it, near ("bn=", and "bgn="
    for their four-letter pieces) and further ("bf=", "bgf="), the line above a value that starts
    its line ("linestart", "pl="), the signs right before and after it ("pb=", "pa=") and the
    words after it ("a=").

    Names are hashed piece by piece, the pieces remembered: a text's numbers share shapes and
    words, and hashing every name afresh cost more than the rest of the tagger."""
    hashed = list(_value_features(text[start:end]))
    before = text[max(0, start - _WINDOW_BEFORE):start]
    words = _WORD.findall(before)[-_WORDS_BEFORE:]
    for distance, word in enumerate(reversed(words)):
        hashed += _word_features(word.lower(), "n" if distance < _NEAR else "f")
    line_start = text.rfind("\n", 0, start) + 1
    if not _WORD.search(text, line_start, start):
        hashed.append(_hashed("linestart"))
        above = text[max(0, line_start - _LINE_ABOVE):line_start]
        hashed += [_hashed(f"pl={word.lower()}") for word in _WORD.findall(above)[-4:]]
    sign_before = before.rstrip(" \t")[-1:]
    after = text[end:end + 40]
    sign_after = after.lstrip(" \t")[:1]
    hashed.append(_hashed(f"pb={sign_before}"))
    hashed += [_hashed(f"a={word.lower()}") for word in _WORD.findall(after)[:_WORDS_AFTER]]
    hashed.append(_hashed(f"pa={sign_after}"))
    return hashed


def _value_names(value: str) -> list[str]:
    digits = sum(ch.isdigit() for ch in value)
    letters = sum(ch.isalpha() for ch in value)
    names = ["bias", f"nd={_bucket(digits)}", f"nl={_bucket(letters)}", f"sh={_shape(value)}"]
    if " " in value:
        names.append("grouped")
    names += [f"sep{sep}" for sep in "-./" if sep in value]
    if value[:2].isalpha():
        names.append(f"p2={value[:2].upper()}")
    if any(ch.islower() for ch in value):
        names.append("lower")
    return names


def _word_names(word: str, where: str) -> list[str]:
    return [f"b{where}={word}", *(f"bg{where}={word[i:i + 4]}" for i in range(max(1, len(word) - 3)))]


@lru_cache(maxsize=16384)
def _value_features(value: str) -> tuple[int, ...]:
    return tuple(_hashed(name) for name in _value_names(value))


@lru_cache(maxsize=16384)
def _word_features(word: str, where: str) -> tuple[int, ...]:
    return tuple(_hashed(name) for name in _word_names(word, where))


@lru_cache(maxsize=65536)
def _hashed(name: str) -> int:
    return zlib.crc32(name.encode()) % DIMENSIONS


def _bucket(count: int) -> str:
    if count < 6:
        return str(count)
    return "6-8" if count <= 8 else "9-11" if count <= 11 else "12-15" if count <= 15 else "16+"


def _shape(value: str) -> str:
    """Letters and digits as classes, long runs shortened: "AB7730192" -> "A29+"."""
    classes = re.sub(r"[A-Z]", "A", re.sub(r"[a-z]", "a", re.sub(r"\d", "9", value)))
    return _RUN.sub(lambda run: run.group(1) + ("+" if len(run.group()) > 3 else str(len(run.group()))),
                    classes)


def probability(weights: dict[int, float], hashed: Sequence[int]) -> float:
    z = sum(weights.get(index, 0.0) for index in hashed)
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


@cache
def shipped_weights() -> dict[int, float]:
    return load(MODEL_PATH)


def load(path: Path) -> dict[int, float]:
    with np.load(path) as data:
        return dict(zip(data["indices"].tolist(), data["weights"].tolist(), strict=True))


def save(path: Path, weights: dict[int, float]) -> None:
    indices = np.array(sorted(weights), dtype=np.int32)
    values = np.array([weights[int(i)] for i in indices], dtype=np.float32)
    np.savez_compressed(path, indices=indices, weights=values)


def _left_alone(scan: Scan, start: int, end: int) -> bool:
    """A word before the value on its line, or on the line above a value that starts its line
    (a table's header), says it is a number the rules leave alone."""
    before = scan.line_before(start, 60)
    line_start = start - len(before)
    if before.strip() or line_start == 0:
        words = [match.group() for match in _LEFT_ALONE_BEFORE.finditer(before)]
    else:
        words = _LEFT_ALONE_WORD.findall(scan.line_before(line_start - 1, 120))
    return any(not _named_pin(word, scan.text[start:end]) for word in words)


def _named_pin(word: str, value: str) -> bool:
    """A "PIN" that is no code typed at a keypad (Kenya's KRA PIN "A012948376Z"): letters in it,
    or more than eight digits."""
    digits = len(_DIGIT.findall(value))
    return word.lower().startswith("pin") and (digits > 8 or any(ch.isalpha() for ch in value))


# Numbers of a standard that names no person, each proved by its own check: a postal item's
# tracking number (UPU S10, "RR158139315RU"), a creditor reference (ISO 11649, "RF18 5390 0754
# 7034"), a legal entity identifier (ISO 17442), and any UUID.
_S10 = re.compile(r"[A-Z]{2} ?(\d{8})(\d) ?[A-Z]{2}")
_S10_WEIGHTS = (8, 6, 4, 2, 3, 5, 9, 7)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def other_standard_number(value: str) -> bool:
    """Whether `value` is a tracking number, a creditor reference, an LEI or a UUID."""
    if _UUID.fullmatch(value):
        return True
    s10 = _S10.fullmatch(value)
    if s10:
        check = 11 - sum(int(d) * w for d, w in zip(s10.group(1), _S10_WEIGHTS, strict=True)) % 11
        return {10: 0, 11: 5}.get(check, check) == int(s10.group(2))
    compact = value.replace(" ", "").upper()
    if compact.startswith("RF") and iso11649.is_valid(compact):
        return True
    return len(compact) == 20 and lei.is_valid(compact)


def tagged(scan: Scan, weights: dict[int, float]) -> Iterator[tuple[int, int]]:
    """Spans the model with `weights` finds likely enough, except numbers the rules leave alone on
    purpose."""
    text = scan.text
    for start, end in candidates(text):
        if probability(weights, features(text, start, end)) <= THRESHOLD:
            continue
        if not reads_as_identifier(text, start, end) or _left_alone(scan, start, end) or \
                other_standard_number(text[start:end]):
            continue
        yield start, end


def phones_taken_over(scan: Scan, finding: Candidate, others: list[Candidate]) -> list[Candidate]:
    """The phone candidates `finding` replaces: every candidate it overlaps must be a phone lying
    within it (brackets around it aside), with no phone word before it on its line or after it in
    its clause; else none."""
    overlapping = [c for c in others if c.start < finding.end and finding.start < c.end]
    if not overlapping or any(c.kind != "phone" or not _within(scan.text, c, finding) for c in overlapping):
        return []
    after = CLAUSE_AFTER.match(scan.line_after(finding.end, 40))
    assert after is not None  # the pattern matches the empty string too
    near = f"{scan.line_before(finding.start, 40)} {after.group()}"
    if any(not _NUMBER_OF.match(near, cue.start()) for cue in PHONE_CONTEXT.finditer(near)):
        return []
    return [] if _PHONE_WORD_PIECE.search(near) else overlapping


def _within(text: str, phone: Candidate, finding: Candidate) -> bool:
    """Whether the phone lies within the finding, but for the brackets around it ("(8504126319)")."""
    return (not text[phone.start:finding.start].strip("( ")
            and not text[max(finding.end, phone.start):phone.end].strip(") "))


def find(scan: Scan) -> Iterator[Candidate]:
    """The engine runs it after every other recognizer and keeps only what overlaps none of theirs
    (engine.FALLBACKS), or only phones read by their shape alone (phones_taken_over): it adds
    findings, it never reshapes or outranks another rule's."""
    if not _DIGIT.search(scan.text):
        return
    for start, end in tagged(scan, shipped_weights()):
        yield Candidate("id", start, end, "id_tagger", PRIORITY)
