"""Phone numbers, found and validated by Google's libphonenumber (the `phonenumbers` package).

A fast regex picks out digit runs with at least 7 digits; libphonenumber's PhoneNumberMatcher
(leniency VALID) then decides on a window around each one. Region US reads international
numbers (+49 …, 0044 … needs a European region) and North American national numbers; national
numbers of other countries only parse with their own region, so windows that start with a trunk
0, or follow a word such as "phone", "Tel." or "Handy", are also tried with NATIONAL_REGIONS.
Running the matcher over the whole text once per region would cost ~2.5 ms per region per 4 KB.
Leniency VALID rejects dates, versions, IP addresses and digit runs that only have a phone's
length, such as order numbers and timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from phonenumbers import Leniency, PhoneNumberMatcher

from .findings import Candidate
from .scan import Scan

PRIORITY = 60
DEFAULT_REGION = "US"
# Tried in order on national-format windows; the first region that validates the number wins.
NATIONAL_REGIONS: tuple[str, ...] = (
    "GB", "DE", "FR", "NL", "BE", "IT", "ES", "PT", "IE", "CH", "AT", "SE", "NO", "DK", "FI", "PL",
    "AU", "NZ", "JP", "IN", "BR", "MX", "ZA", "SG", "CA",
)

_CANDIDATE = re.compile(
    r"(?<![\w+])\+?\(?\d[\d \t./()–-]{5,24}\d(?:[ \t]*(?:ext\.?|x|#)[ \t]*\d{1,5})?(?![\w])"
)
# Words that say "a phone number follows", in the languages of NATIONAL_REGIONS.
_CUE_BEFORE = re.compile(
    r"(?:phone|tel|telephone|téléphone|telefon|telefono|teléfono|mobile|mobil|handy|cell|portable|"
    r"móvil|cellulare|whatsapp|sms|fax|call|ring|text|number|numéro|número|nummer|rückruf)\b\W{0,6}$",
    re.IGNORECASE,
)
# Digit runs that are never phone numbers: dates, decimals, versions ("6.8.0-1015").
_NOT_A_PHONE = re.compile(r"\d{1,4}([./-])\d{1,2}\1\d{1,4}|\d+\.\d+|\d+(?:\.\d+){2,}(?:[-+][\w.]+)?")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for window in _CANDIDATE.finditer(text):
        raw = window.group()
        if sum(ch.isdigit() for ch in raw) < 7 or _NOT_A_PHONE.fullmatch(raw.strip()):
            continue
        cued = bool(_CUE_BEFORE.search(scan.line_before(window.start(), 30)))
        if raw.startswith("00"):
            regions: tuple[str, ...] = ("GB",)  # "00" dials abroad from GB as from most of Europe
        elif cued or raw.lstrip("(").startswith("0"):
            regions = (DEFAULT_REGION, *NATIONAL_REGIONS)
        else:
            regions = (DEFAULT_REGION,)
        for start, end in _matches(text, *window.span(), regions):
            yield Candidate("phone", start, end, "phonenumbers", PRIORITY)


def _matches(text: str, start: int, end: int, regions: tuple[str, ...]) -> list[tuple[int, int]]:
    """Numbers libphonenumber validates in text[start:end] with the first region that finds any."""
    # A character of context either side lets the matcher apply its own boundary checks.
    lo, hi = max(0, start - 1), min(len(text), end + 1)
    window = text[lo:hi]
    for region in regions:
        matcher = PhoneNumberMatcher(window, region, leniency=Leniency.VALID)
        found = [(lo + match.start, lo + match.end) for match in matcher]
        if found:
            return found
    return []
