"""Phone numbers, found and validated by Google's libphonenumber (the `phonenumbers` package).

A fast regex picks out digit runs with at least 7 digits; libphonenumber's PhoneNumberMatcher
(leniency VALID) then decides on a window around each one. Region US reads international
numbers (+49 …, 0044 … needs a European region) and North American national numbers; national
numbers of other countries only parse with their own region, so windows that start with a trunk
0, or follow a word such as "phone", "Tel." or "Handy" (right before, or up to three words before:
"Numero del corriere: …"), or have such a word in the clause after them ("… is my mobile"), are
also tried with NATIONAL_REGIONS.
Running the matcher over the whole text once per region would cost ~2.5 ms per region per 4 KB.
Leniency VALID rejects dates, versions, IP addresses and digit runs that only have a phone's
length, such as order numbers and timestamps.

libphonenumber also rejects numbers that are shaped like phones but not assigned (a North
American area code nobody uses yet, `(375) 555-0142`), and those are still someone's number in
a note. So a North American number written the way people write phones (grouped 3-3-4 with
separators, NANP's first digits) is a phone on its shape alone when it has parentheses around the
area code or a `+1` in front, and otherwise when a phone word ("call", "mobile", "fax", "office
line", "reach me") comes earlier in the line or later in the same clause; an international
number (`+CC` and 7–14 more digits) that libphonenumber rejects is a phone next to such a word.
A digit run glued by a hyphen to a code (`INV-2024-000381`, `375-555-0142-A`) or right after a
word that names another kind of number (order, invoice, ISBN, SKU, serial, tracking, build …) is
never a phone.
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
_CUE_WORDS = (
    r"phone|tel|telephone|téléphone|telefon|telefono|teléfono|telefoon|telefonnummer|rufnummer|"
    r"handynummer|mobilnummer|mobile|mobil|mobiel|handy|cell|celular|telemóvel|portable|móvil|cellulare|"
    r"whatsapp|sms|fax|call|ring|text|number|numéro|número|numero|nummer|rückruf"
)
_CUE_BEFORE = re.compile(rf"(?:{_CUE_WORDS})\b\W{{0,6}}$", re.IGNORECASE)
# A cue word with up to three words between it and the number: "Numero del corriere: …",
# "cellulare è …", "Número de la oficina: …". Only where no other kind of number is named in that
# stretch ("Numero di serie: …", "number of the invoice: …").
_CUE_EARLIER = re.compile(rf"\b(?:{_CUE_WORDS})\b(?:[ \t]+[^\W\d_]+){{1,3}}\W{{0,6}}$", re.IGNORECASE)
# Digit runs that are never phone numbers: dates, decimals, versions ("6.8.0-1015").
_NOT_A_PHONE = re.compile(r"\d{1,4}([./-])\d{1,2}\1\d{1,4}|\d+\.\d+|\d+(?:\.\d+){2,}(?:[-+][\w.]+)?")
_EXTENSION = r"(?:[ \t]*(?:ext\.?|x|#)[ \t]*\d{1,5})?"
# "(375) 555-0142", "+1 375 555 0142", "1-375-555-0142", "212.736.3100": NANP area code and
# exchange start with 2-9; the groups are separated (a bare 10-digit run is left to the library).
_NANP = re.compile(
    r"(?P<country>\+?1[ \t.-]?)?(?:(?P<paren>\([2-9]\d{2}\)[ \t]?)|[2-9]\d{2}(?P<sep>[ \t.-]))"
    rf"[2-9]\d{{2}}[ \t.-]\d{{4}}{_EXTENSION}"
)
# "+44 7700 900123", "+49 (0)30 1234 5678": a country code and groups of digits.
_INTERNATIONAL = re.compile(rf"\+[1-9]\d{{0,2}}(?:[ \t.-]?\(?\d{{1,5}}\)?){{2,6}}{_EXTENSION}")
# A phone word earlier in the line, not necessarily right before the number ("call the front
# desk at …"). Stricter than _CUE_BEFORE: "number" alone and "text" alone are too common here.
PHONE_CONTEXT = re.compile(
    r"\b(?:phones?|tel|telephone|mobile|mobil|cell(?:phone)?|call(?:ed|ing)?|ring|texts?|texting|fax|"
    r"whatsapp|sms|signal|hotline|(?:office|direct|support|main|land|help|phone)[ \t]?line|"
    r"(?:phone|contact|mobile|cell|my|her|his|their|our|new)[ \t]+(?:number|no\.?|#)|"
    r"reach (?:me|us|him|her|them)|"
    r"téléphone|telefon|telefono|teléfono|handy|portable|móvil|cellulare|numéro|número|nummer)\b",
    re.IGNORECASE,
)
# Words naming a number that is not a phone, right before it ("Order number 375-555-0142-A").
_OTHER_NUMBER_WORDS = (
    r"orders?|invoices?|inv|isbn(?:-1[03])?|issn|ean|upc|gtin|sku|serial|s/n|sn|tracking|parcel|"
    r"shipment|part|model|build|version|release|ticket|case|ref(?:erence)?|receipt|transaction|batch|lot|"
    r"patent|doi|iban|routing|swift|bic|po|purchase order|confirmation|booking|voucher|coupon|"
    r"license|licence|serie|série|pedido|ordine|fattura|factura|facture|rechnung|bestellung|"
    r"(?:auftrags?|bestell|sendungs|rechnungs|vorgangs|buchungs|lieferschein|artikel)(?:nummer|-?nr\.?)|"
    # Ids of runs and devices, and the identifiers of banks and people (docs/redaction.md, "id").
    r"run(?:[ \t_-]?id)?|job[ \t_-]?id|(?:express[ \t]+)?service[ \t]+(?:code|tag)|sort[ \t]+code|aba|bsb|"
    r"ssn|bsn|pesel|regon|nif|dni|cpf|vat|steuer-?(?:id|nummer|nr\.?)|passport"
)
_OTHER_NUMBER_BEFORE = re.compile(
    rf"\b(?:{_OTHER_NUMBER_WORDS})"
    r"(?:[ \t_-]*(?:number|no\.?|nr\.?|num|id|code|#))?[\"']?[ \t]*(?:is|was|:|#|=)?[ \t]*[\"']?$",
    re.IGNORECASE,
)
# Groups of a code before the digit run ("Tracking: 1Z 4F7 83W 03 9184 2270"): the word naming the
# number stands before them.
_CODE_GROUPS_BEFORE = re.compile(r"(?:[A-Z0-9]*\d[A-Z0-9]*[ \t]+)+$")
# Two groups or more that mix capitals and digits right before the run: it ends a code ("UPS says
# 1Z 4F8 E21 03 9182 7734"), whatever names it.
_MIXED_GROUPS_BEFORE = re.compile(r"(?:(?<![\w-])(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,}[ \t]+){2,}$")
# A Brazilian postcode (CEP, 5-3 digits): no phone has that shape.
_CEP = re.compile(r"\d{5}-\d{3}")
_OTHER_NUMBER_WORD = re.compile(rf"\b(?:{_OTHER_NUMBER_WORDS})\b", re.IGNORECASE)
# The clause after a number, up to a sentence's end: "+44 7700 900123 is the on-call phone".
CLAUSE_AFTER = re.compile(r"[^.;!?]*")
# The result of arithmetic: "2^31 - 1 = 2147483647", "x * 1000 = 86400000".
_MATH_BEFORE = re.compile(
    r"[\d)][ \t]*[=×*/^][ \t]*$|\b(?:mod(?:ulo)?|sqrt|factori[sz]e|divide|multiply)[ \t]+$", re.IGNORECASE
)
# A number that math is done with: "is 2147483647 prime?", "2147483647 mod 97".
_MATH_AFTER = re.compile(r"[ \t]*(?:prime|mod(?:ulo)?|divisible|squared|cubed|factorial)\b", re.IGNORECASE)
# A timestamp ("[2026-03-11 04:12:55]"): no phone starts with a whole ISO date.
_DATE_FIRST = re.compile(r"\(?(?:19|20)\d{2}-[01]\d-[0-3]\d(?!\d)")
# Six or more groups of one or two digits ("04 12 19 33 41 47", lottery numbers, scores): phones
# written in pairs have five at most.
_PAIRS = re.compile(r"(?:\d{1,2}[ \t]+){5,}\d{1,2}")
# A hyphen glues the digits to a code: "INV-2024-000381", "SN-4471-2290-8813", "375-555-0142-A".
_GLUED_BEFORE = re.compile(r"\w-$")
_GLUED_AFTER = re.compile(r"-\w")
# A country code the matcher left out when it read the rest as another country's number.
_COUNTRY_PREFIX = re.compile(r"\+?\d{1,3}[ \t.-]*\(?")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for window in _CANDIDATE.finditer(text):
        raw = window.group()
        if sum(ch.isdigit() for ch in raw) < 7:
            continue
        before = scan.line_before(window.start(), 40)
        if (_GLUED_BEFORE.search(before) or _GLUED_AFTER.match(text, window.end())
                or _DATE_FIRST.match(raw) or _PAIRS.fullmatch(raw)
                or _OTHER_NUMBER_BEFORE.search(before)
                or _OTHER_NUMBER_BEFORE.search(_CODE_GROUPS_BEFORE.sub("", before))
                or _MIXED_GROUPS_BEFORE.search(before) or _CEP.fullmatch(raw)
                or _MATH_BEFORE.search(before)
                or _MATH_AFTER.match(text, window.end())):
            continue
        # A phone word in the same clause after the number counts like one before it.
        clause = CLAUSE_AFTER.match(scan.line_after(window.end(), 40))
        assert clause is not None  # the pattern matches the empty string too
        after = clause.group()
        context_after = bool(PHONE_CONTEXT.search(after))
        shape = _by_shape(raw, context=context_after or bool(PHONE_CONTEXT.search(before)))
        if shape:
            yield Candidate("phone", window.start(), window.start() + shape, "phone_shape", PRIORITY)
            continue
        if _NOT_A_PHONE.fullmatch(raw.strip()):
            continue
        cued = context_after or _is_cued(scan.line_before(window.start(), 40))
        if raw.startswith("00"):
            regions: tuple[str, ...] = ("GB",)  # "00" dials abroad from GB as from most of Europe
        elif cued or raw.lstrip("(").startswith("0"):
            regions = (DEFAULT_REGION, *NATIONAL_REGIONS)
        else:
            regions = (DEFAULT_REGION,)
        for start, end in _matches(text, *window.span(), regions):
            # "+1 (375) 555-0142" read as a number of another country: keep the "+1" with it.
            if _COUNTRY_PREFIX.fullmatch(text, window.start(), start):
                start = window.start()
            yield Candidate("phone", start, end, "phonenumbers", PRIORITY)


def _is_cued(before: str) -> bool:
    """A phone word right before the number, or a few words before it with no other kind of
    number named in between."""
    if _CUE_BEFORE.search(before[-30:]):
        return True
    earlier = _CUE_EARLIER.search(before)
    return earlier is not None and not _OTHER_NUMBER_WORD.search(before, earlier.start() + 1)


def _by_shape(raw: str, *, context: bool) -> int:
    """The length of the phone that starts `raw` by its shape alone (see the module docstring), or 0."""
    nanp = _NANP.match(raw)
    if nanp and (nanp.group("paren") or nanp.group("country") or context):
        return nanp.end()
    if context:
        international = _INTERNATIONAL.match(raw)
        if international and 8 <= sum(ch.isdigit() for ch in international.group()) <= 15:
            return international.end()
    return 0


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
