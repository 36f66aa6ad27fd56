"""Identifiers found without a label: numbers whose format is specific to one kind of identifier
and whose check digits validate (python-stdnum).

Only formats that a random number, a date, a version, an amount or a product code rarely has
count here: IBANs and EU VAT numbers (country prefix and check digits), US SSNs written 3-2-4 with
hyphens, UK National Insurance numbers, Italian codici fiscali, Spanish DNI/NIE (digits and a
check letter), French NIR (mod 97), Belgian national numbers, Swedish, Finnish and Norwegian
personal numbers, Brazilian CPF/CNPJ and Chilean RUT in their dotted forms, Argentine CUIT,
Mexican CURP/RFC, Chinese resident ids, Korean RRNs, Swiss AHV numbers, Irish PPS numbers, Czech
and Slovak birth numbers, Malaysian MyKad, Indian PAN, Singapore NRIC.

Plain digit runs with one check digit (a Dutch BSN, a German Steuer-ID, a PESEL, a Canadian SIN,
a card number) pass for one random number in ten or eleven, so they count only after a label
(labelled_ids.py). A run glued by a hyphen to a code, or right after a word that names another
kind of number (order, invoice, ISBN, SKU, build, serial, tracking …), is never an identifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import import_module

from .findings import Candidate
from .scan import Scan

# Check digits and a specific format: above labels (74), below emails and key formats (90).
PRIORITY = 80

_EU_PREFIXES = "AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|GB|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI"


@dataclass(frozen=True)
class Scheme:
    """One identifier format: its shape in text and the stdnum module that validates it."""

    name: str
    pattern: str
    module: str  # "stdnum.<country>.<number>", or "" for the validators written here
    grouped: bool = False  # the shape ends in free groups: try shorter spans too (see _valid_span)


# An IBAN written other ways: groups joined by hyphens or dots ("CH92-0023-0081-…"), a space after
# the country ("IT 38 T 02008 01600 …"), groups longer than four, or all in lower case ("nl35ingb00…").
# Only the mod-97 check decides, so the looser shape costs no look-alike.
_IBAN_LOOSE_SHAPE = r"[A-Z]{2}[ -]?\d{2}(?:[ .-]?[A-Z0-9]{1,12}){1,8}|[a-z]{2}\d{2}[a-z]{4}[a-z0-9]{6,26}"

SCHEMES: tuple[Scheme, ...] = (
    Scheme("iban", r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}", "stdnum.iban", grouped=True),
    Scheme("iban_loose", _IBAN_LOOSE_SHAPE, "stdnum.iban", grouped=True),
    Scheme("eu_vat", rf"(?:{_EU_PREFIXES})[ -]?[0-9A-Z](?:[ .-]?[0-9A-Z]){{7,13}}", "stdnum.eu.vat",
           grouped=True),
    Scheme("ch_uid", r"CHE[ -.]?\d{3}\.\d{3}\.\d{3}", "stdnum.ch.uid"),
    Scheme("us_ssn", r"\d{3}-\d{2}-\d{4}", "stdnum.us.ssn"),
    Scheme("us_itin", r"9\d{2}-[5-9]\d-\d{4}", "stdnum.us.itin"),
    Scheme("gb_nino", r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]", ""),
    Scheme("it_codicefiscale",
           r"[A-Z]{6}[0-9LMNP-V]{2}[A-EHLMPR-T][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]",
           "stdnum.it.codicefiscale"),
    Scheme("es_dni", r"\d{8}-?[A-Z]", "stdnum.es.dni"),
    Scheme("es_nie", r"[XYZ]-?\d{7}-?[A-Z]", "stdnum.es.nie"),
    Scheme("fr_nir", r"[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}", "stdnum.fr.nir"),
    Scheme("be_nn", r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}", "stdnum.be.nn"),
    Scheme("se_personnummer", r"(?:19|20)?\d{6}[-+]\d{4}", "stdnum.se.personnummer"),
    Scheme("fi_hetu", r"\d{6}[-+A-FU-Y]\d{3}[0-9A-FHJ-NPR-Y]", "stdnum.fi.hetu"),
    Scheme("no_fodselsnummer", r"\d{6} ?\d{5}", "stdnum.no.fodselsnummer"),
    Scheme("br_cpf", r"\d{3}\.\d{3}\.\d{3}-\d{2}", "stdnum.br.cpf"),
    Scheme("br_cnpj", r"\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}", "stdnum.br.cnpj"),
    Scheme("cl_rut", r"\d{1,2}\.\d{3}\.\d{3}-[0-9kK]", "stdnum.cl.rut"),
    Scheme("ar_cuit", r"\d{2}-\d{8}-\d", "stdnum.ar.cuit"),
    Scheme("mx_curp", r"[A-Z]{4}\d{6}[HM][A-Z]{5}[0-9A-Z]\d", "stdnum.mx.curp"),
    Scheme("mx_rfc", r"[A-ZÑ&]{4}\d{6}[A-Z0-9]{2}[0-9A]", ""),
    Scheme("cn_ric", r"\d{17}[\dX]", "stdnum.cn.ric"),
    Scheme("kr_rrn", r"\d{6}-\d{7}", "stdnum.kr.rrn"),
    Scheme("ch_ssn", r"756\.\d{4}\.\d{4}\.\d{2}", "stdnum.ch.ssn"),
    Scheme("ie_pps", r"\d{7}[A-W][A-IW]?", "stdnum.ie.pps"),
    Scheme("cz_rc", r"\d{6}/\d{3,4}", "stdnum.cz.rc"),
    Scheme("my_nric", r"\d{6}-\d{2}-\d{4}", "stdnum.my.nric"),
    Scheme("in_pan", r"[A-Z]{3}[ABCFGHJLPT][A-Z]\d{4}[A-Z]", "stdnum.in_.pan"),
    Scheme("sg_nric", r"[STFG]\d{7}[A-Z]", ""),
    # A payment card: an issuer's first digits, four groups of four, the Luhn check digit.
    # An Aadhaar number as printed on the card (three groups of four, Verhoeff check digit).
    Scheme("in_aadhaar", r"[2-9]\d{3} \d{4} \d{4}(?! \d)", "stdnum.in_.aadhaar"),
    Scheme("nz_bankaccount", r"\d{2}-\d{4}-\d{7}-\d{2,3}", "stdnum.nz.bankaccount"),
    Scheme("payment_card", r"(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|6011|65\d{2})(?:[ -]?\d{4}){3}", ""),
    # An IBAN in print form (groups of four after a space) whose check digits are wrong is still an
    # IBAN someone typed with a slip: its country and length are checked, not its checksum.
    Scheme("iban_print_form", r"[A-Z]{2}\d{2}(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?", "", grouped=True),
)

_BOUNDARY_BEFORE = r"(?<![\w./-])"
_BOUNDARY_AFTER = r"(?![\w/-]|\.\w)"
_PATTERN = re.compile(
    "|".join(rf"{_BOUNDARY_BEFORE}(?P<{s.name}>{s.pattern}){_BOUNDARY_AFTER}" for s in SCHEMES)
)
# The loose IBAN shape on its own: the alternation above gives a start to the first shape that fits.
_IBAN_LOOSE = re.compile(rf"{_BOUNDARY_BEFORE}(?:{_IBAN_LOOSE_SHAPE}){_BOUNDARY_AFTER}")
# Where a scheme can start: a capital or a digit at a token's start. Matching the schemes only
# there is several times faster than searching the text with their alternation.
# Every scheme starts with at most six capitals and then a digit ("RSSMRA85…", "CHE-123…").
_START = re.compile(r"(?<![\w./-])(?=[A-Z]{0,6}[ .-]?\d|[a-z]{2}\d{2}[a-z]{4}\d)[A-Za-z0-9]")
# Where a scheme could start at all: a digit run of 6+ or a capital followed by digits soon.
_CHEAP = re.compile(r"\d{6}|[A-Z]{1,6} ?\d{2}|\d{2,3}[.-]\d|\d{4}[ -]\d{4}|[a-z]{2}\d{2}[a-z]{4}\d")
_OTHER_NUMBER_BEFORE = re.compile(
    r"\b(?:orders?|invoices?|inv|isbn(?:-1[03])?|issn|ean|upc|gtin|sku|serial|s/n|sn|tracking|parcel|"
    r"shipment|part|model|build|version|release|ticket|case|receipt|transaction|batch|lot|patent|doi|"
    r"po|purchase order|confirmation|booking|voucher|coupon|licen[cs]e|commit|sha|hash|checksum|"
    r"item|product|article|artikel|bestellung|rechnung|facture|commande|pedido|factura|ordine|fattura|"
    r"test[ \t]+card|test)"
    r"(?:[ \t]*(?:number|no\.?|nr\.?|num|id|code|#))?[ \t]*(?:is|was|:|#|=)?[ \t]*$",
    re.IGNORECASE,
)
_TEST_CARD = re.compile(r"\b(?:test[ \t_-]*cards?|sandbox|fixtures?|dummy|fake)\b", re.IGNORECASE)
_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})
_SG_NRIC_LETTERS = {"S": "JZIHGFEDCBA", "T": "JZIHGFEDCBA", "F": "XWUTRQPNMLK", "G": "XWUTRQPNMLK"}


# The second line of a passport's machine-readable zone (ICAO 9303, TD3): document number and
# its check digit, nationality, birth date, sex, expiry, personal number. It is redacted whole.
_MRZ_LINE = re.compile(
    r"(?m)^(?P<number>[A-Z0-9<]{9})(?P<check>\d)[A-Z<]{3}\d{6}\d[MFX<]\d{6}\d[A-Z0-9<]{14}[0-9<]\d[ \t]*$"
)
_MRZ_WEIGHTS = (7, 3, 1)
# A UK sort code and account number written as a pair, "20-32-06 73495118" or, with a payment word
# in the line, "793656 37995551" ("send 900 quid to …"). No check digit: the pair's shape and
# the payment word are the evidence.
_UK_BANK_PAIR = re.compile(
    r"(?<![\w.,/-])(?P<sort>\d{2}(?P<sep>-?)\d{2}(?P=sep)\d{2})[ \t,/]+(?P<account>\d{8})(?![\w-]|[.,]\d)"
)
_PAYMENT_WORD = re.compile(
    r"\b(?:pay|paid|send|sent|transfer|bank|quid|bacs|sort|account|acc|a/c|payee|wire|refund|deposit)\b|£",
    re.IGNORECASE,
)


# A New Zealand bank account's print form (bank, branch, account, suffix: "12-3140-0571926-00"). Its
# check digit proves it; typed with a slip it is still an account when the line speaks of paying.
_NZ_ACCOUNT = re.compile(r"(?<![\w./-])\d{2}-\d{4}-\d{7}-\d{2,3}(?![\w/-])")


# The MICR line printed on a US cheque: the routing number between transit symbols, then the
# account number before the on-us symbol ("⑆071900320⑆ 209381746⑈ 1187").
_MICR = re.compile(r"⑆(?P<routing>\d{9})⑆[ \t]*(?P<account>\d[\d -]{3,18}\d)[ \t]*⑈")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    if "⑆" in text:
        for line in _MICR.finditer(text):
            yield Candidate("id", *line.span("routing"), "micr_line", PRIORITY)
            yield Candidate("id", *line.span("account"), "micr_line", PRIORITY)
    for pair in _UK_BANK_PAIR.finditer(text):
        if pair.group("sep") or _PAYMENT_WORD.search(text, max(0, pair.start() - 80), pair.start()):
            yield Candidate("id", *pair.span("sort"), "uk_bank_pair", PRIORITY)
            yield Candidate("id", *pair.span("account"), "uk_bank_pair", PRIORITY)
    if "-" in text:
        for account in _NZ_ACCOUNT.finditer(text):
            if _PAYMENT_WORD.search(text, max(0, account.start() - 80), account.start()):
                yield Candidate("id", *account.span(), "nz_bank_account", PRIORITY)
    if "<<" in text:
        for line in _MRZ_LINE.finditer(text):
            if _mrz_check(line.group("number")) == int(line.group("check")):
                yield Candidate("id", line.start(), line.start() + 44, "passport_mrz", PRIORITY)
    found_at: set[int] = set()
    if _CHEAP.search(text):
        for start in _START.finditer(text):
            found = _at(scan, start.start())
            if found is not None:
                found_at.add(found.start)
                yield found
    yield from _in_lower_case(scan, found_at)


def _in_lower_case(scan: Scan, found_at: set[int]) -> Iterator[Candidate]:
    """Identifiers typed in lower case ("de89 3704 0044 …", "y3095718r", "vrdlcu78m22f205n"), read
    in a copy of the text with the token upper-cased by the schemes whose check makes that as safe."""
    text = scan.text
    for start in _LOWER_START.finditer(text):
        position = start.start()
        if position in found_at:
            continue
        end = position + _LONGEST_MATCH
        # Character by character, so that the copy keeps the text's offsets ("ß" stays one).
        upper = "".join(ch.upper() if len(ch.upper()) == 1 else ch for ch in text[position:end])
        found = _at(scan, position, text=text[:position] + upper + text[end:], schemes=_CASELESS_SCHEMES)
        if found is not None:
            yield found


def _at(scan: Scan, position: int, *, text: str = "",
        schemes: tuple[_Shaped, ...] = ()) -> Candidate | None:
    """The identifier with valid check digits that starts at `position`, if any (in `text`, a
    copy of the scan's text of the same length, and among `schemes` when given)."""
    text = text or scan.text
    matches = [_PATTERN.match(text, position), _IBAN_LOOSE.match(text, position)]
    for match in filter(None, matches):
        # The alternation stops at the first scheme whose shape fits; others may fit the same
        # text ("131052-3084" is a Swedish or a Finnish number), so each is tried in turn.
        for scheme in schemes or _SCHEMES_BY_SHAPE:
            if not scheme.shape.fullmatch(match.group()):
                continue
            span = _valid_span(scheme.scheme, text, match.start(), match.end())
            if span and scheme.name == "payment_card" and _test_card(scan, *span):
                return None
            if span and not _OTHER_NUMBER_BEFORE.search(text, max(0, span[0] - 40), span[0]):
                return Candidate("id", *span, scheme.name, PRIORITY)
    return None


def _test_card(scan: Scan, start: int, end: int) -> bool:
    """A card number its line calls a test or sandbox card ("test card for Stripe sandbox: 4081…")."""
    return bool(_TEST_CARD.search(scan.line_before(start, 60)) or _TEST_CARD.search(scan.line_after(end, 40)))


def valid_format(value: str) -> bool:
    """Whether `value` whole is one of SCHEMES with valid check digits ("RSSMRA85T10A562S")."""
    return any(shaped.shape.fullmatch(value) and _validator(shaped.scheme)(value)
               for shaped in _SCHEMES_BY_SHAPE)


def _mrz_check(field: str) -> int:
    values = (0 if ch == "<" else int(ch) if ch.isdigit() else ord(ch) - 55 for ch in field)
    return sum(v * _MRZ_WEIGHTS[i % 3] for i, v in enumerate(values)) % 10


def _valid_span(scheme: Scheme, text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span whose check digits validate: the whole match, or for grouped schemes (an IBAN
    followed by "EUR", a VAT number followed by more digits) the longest valid prefix that ends
    at a group's end."""
    ends = [end]
    if scheme.grouped:
        ends += [i for i in range(end - 1, start + 8, -1) if text[i] in " .-"]
    validator = _validator(scheme)
    for candidate_end in ends:
        if validator(text[start:candidate_end]):
            return start, candidate_end
    return None


def _validator(scheme: Scheme) -> Callable[[str], bool]:
    if scheme.module:
        return import_module(scheme.module).is_valid
    return _OWN_VALIDATORS[scheme.name]


def _valid_nino(value: str) -> bool:
    return value.replace(" ", "")[:2] not in _NINO_BAD_PREFIXES


def _valid_mx_rfc(value: str) -> bool:
    from stdnum.mx import rfc

    try:
        rfc.validate(value, validate_check_digits=True)
    except ValueError:
        return False
    return True


def _valid_sg_nric(value: str) -> bool:
    weights = (2, 7, 6, 5, 4, 3, 2)
    total = sum(int(d) * w for d, w in zip(value[1:8], weights, strict=True))
    if value[0] in "TG":
        total += 4
    return _SG_NRIC_LETTERS[value[0]][total % 11] == value[8]


def _iban_but_checksum(value: str) -> bool:
    from stdnum import iban

    # With the check digits made right, the rest must be a valid IBAN: a known country, its length
    # and format. A creditor reference ("RF34 5390 6822") or a placeholder ("XX00 0000 …") is not.
    compact = iban.compact(value)
    try:
        fixed = compact[:2] + iban.calc_check_digits(compact) + compact[4:]
    except ValueError:
        return False
    return iban.is_valid(fixed)


def _valid_card(value: str) -> bool:
    from stdnum import luhn

    return luhn.is_valid(value.replace(" ", "").replace("-", ""))


_OWN_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "payment_card": _valid_card,
    "iban_print_form": _iban_but_checksum,
    "gb_nino": _valid_nino,
    "mx_rfc": _valid_mx_rfc,
    "sg_nric": _valid_sg_nric,
}


@dataclass(frozen=True)
class _Shaped:
    name: str
    shape: re.Pattern[str]
    scheme: Scheme


_SCHEMES_BY_SHAPE = tuple(_Shaped(s.name, re.compile(s.pattern), s) for s in SCHEMES)
# Schemes whose check digits or letters make a match typed in lower case as safe as one in capitals
# (IBANs, codici fiscali, DNI/NIE, CURP/RFC, Finnish, Chinese, Singaporean and Irish ids), and the
# Indian PAN, whose letters-digits-letter shape no word has. Not the UK NINO, which has no check.
_CASELESS = frozenset({"iban", "iban_loose", "it_codicefiscale", "es_dni", "es_nie", "mx_curp", "mx_rfc",
                       "fi_hetu", "cn_ric", "ie_pps", "in_pan", "sg_nric"})
_CASELESS_SCHEMES = tuple(shaped for shaped in _SCHEMES_BY_SHAPE if shaped.name in _CASELESS)
# Longer than any scheme's match: an IBAN of 34 characters in groups, with its spaces.
_LONGEST_MATCH = 64
# A token that could start one of them typed in lower case: up to six letters, then a digit, and a
# lower-case letter before its end ("it26", "y3095718r", "12345678z", "120398-914x").
_LOWER_START = re.compile(r"(?<![\w./-])(?=[A-Za-z]{0,6}\d)(?=[A-Za-z0-9-]*[a-z])[A-Za-z0-9]")
