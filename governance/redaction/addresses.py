"""Street addresses and PO boxes, by hand-written patterns (no parser library finds addresses in
free text without a large model: libpostal needs ~2 GB of data, usaddress only tags a string that
is already known to be an address).

Covered: number-first streets with an English suffix (US, UK, Canada, Australia, New Zealand),
German/Dutch/Nordic streets with a suffix and the number after them, French number-first streets
with a lowercase type ("12 rue de la Paix"), Spanish/Italian/Portuguese type-first streets ("Calle
de Alcalá 48"), Polish, Czech and Slovak type-first streets ("ul. Marszałkowska 84"), German
streets named with a preposition ("Am Sandtorkai 50, 20457 Hamburg"), PO boxes in several
languages, and the city, state, ZIP or postcode that follows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.text import capitalised_word_of

from .findings import Candidate
from .scan import Scan

PRIORITY = 55

_UP = "A-ZÀ-ÖØ-ÞŁŚŻŹĆŃŠŽČŘ"
# A capitalised word, possibly hyphenated or with an apostrophe ("Saint-Honoré", "O'Connell").
_CAP = capitalised_word_of(_UP)
# A word of a city name: capitalised, no digits, and not a 2–3 letter state or province code.
_CITY_WORD = rf"(?![A-Z]{{2,3}}\b){_CAP}\.?"
_CITY = rf"{_CITY_WORD}(?:[ \t]+{_CITY_WORD}){{0,2}}"
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}"
_CA_POSTCODE = r"[A-Z]\d[A-Z][ \t]?\d[A-Z]\d"
_ZIP = rf"(?:\d{{5}}(?:-\d{{4}})?|{_CA_POSTCODE}|\d{{4}})"

# ", Mountain View, CA 94043" | ", London NW1 6XE" | ", Auckland 1010" | ", São Paulo - SP, 01310-200"
_ANGLO_TAIL = (
    rf",[ \t]*{_CITY}"
    rf"(?:,?[ \t]+[A-Z]{{2,3}}(?:[ \t]+{_ZIP})?\b|[ \t]+{_UK_POSTCODE}\b|[ \t]+\d{{4}}\b"
    rf"|[ \t]*-[ \t]*[A-Z]{{2}}(?:,?[ \t]*\d{{5}}-\d{{3}})?\b)?"
)
# ", 10115 Berlin" | ", 1015 CJ Amsterdam" | ", 1100-053 Lisboa" | ", 00-950 Warszawa"
_EUROPEAN_POSTCODE = r"(?:\d{4,5}|\d{4}[ \t]?[A-Z]{2}|\d{4}-\d{3}|\d{2}-\d{3})"
_EUROPEAN_TAIL = rf",?[ \t]+{_EUROPEAN_POSTCODE}[ \t]+{_CITY}"
_TAIL = rf"(?:{_EUROPEAN_TAIL}|{_ANGLO_TAIL})?"

_HOUSE_NUMBER = r"\b\d{1,6}[A-Za-z]?(?:[-/]\d{1,6}[A-Za-z]?)?"
_DIRECTION = r"(?:[NSEW]|N[EW]|S[EW]|North|South|East|West)\.?"
_STREET_WORD = rf"(?:{_CAP}|\d{{1,3}}(?:st|nd|rd|th))"
_ENGLISH_SUFFIX = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Ter|"
    r"Way|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Crescent|Cres|Close|Gardens|Gdns|Row|Mews|"
    r"Grove|Trail|Trl|Walk|Alley|Plaza|Loop|Hill|Rise|Quay|Wharf|Esplanade|Parade|Green|Park"
)
_UNIT = r"(?:Flat|Unit|Apt|Apartment|Suite|Ste)\.?[ \t]+[\w-]{1,6}"
_UNIT_AFTER = (
    r"(?:,?[ \t]+(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Rm|Bldg|Building|#)\.?[ \t]*#?[\w-]{1,6})?"
)

_ENGLISH = (
    rf"(?:{_UNIT},?[ \t]+)?{_HOUSE_NUMBER}[ \t]+(?:{_DIRECTION}[ \t]+)?"
    rf"(?:{_STREET_WORD}[ \t]+){{1,4}}(?:{_ENGLISH_SUFFIX})\b\.?(?:[ \t]+[NSEW]{{1,2}}\b\.?)?"
    rf"{_UNIT_AFTER}{_TAIL}"
)
# Suffixes written together with the name ("Hauptstraße 5", "Keizersgracht 123"); "-ring" and
# "-gate" are left out because English words end with them ("String 5", "Aggregate 3").
_JOINED_SUFFIX = (
    r"straße|strasse|str\.|weg|platz|allee|gasse|damm|ufer|chaussee|steig|pfad|markt|gracht|straat|"
    r"laan|plein|kade|singel|gade|vej|gatan|vägen|gata|veien"
)
_SEPARATE_SUFFIX = r"Straße|Strasse|Str\.|Weg|Platz|Allee|Gasse|Ring|Damm|Ufer|Chaussee|Markt|Steig"
_NUMBER_AFTER = r"[ \t]+\d{1,4}(?:[ \t]?[a-zA-Z]\b)?"
_GERMANIC = (
    rf"(?:\b{_CAP}?(?i:{_JOINED_SUFFIX})|\b(?:{_CAP}[ \t]+){{1,3}}(?:{_SEPARATE_SUFFIX}))"
    rf"{_NUMBER_AFTER}{_TAIL}"
)
# Streets named after people join the name to the suffix with hyphens: "Karl-Marx-Allee 90",
# "Friedrich-Ebert-Straße 12". Run only where such a suffix and a number occur (see find).
_GERMANIC_HYPHENATED = rf"\b{_CAP}-(?i:{_JOINED_SUFFIX}){_NUMBER_AFTER}{_TAIL}"
_HYPHENATED_HINT = re.compile(rf"-(?i:{_JOINED_SUFFIX})[ \t]+\d")
_ROMANCE_PARTICLE = (
    r"(?:de la|de los|de las|del|de|la|las|los|el|da|do|dos|das|di|della|delle|dei|degli|du|des|le|les)"
)
_ROMANCE_TYPE_FIRST = (
    r"Calle|Carrer|Avenida|Avda\.|Paseo|Plaza|Via|Viale|Piazza|Corso|Largo|Rua|Travessa|Alameda|Praça|"
    r"Rambla|Ronda"
)
_ROMANCE = (
    rf"\b(?:{_ROMANCE_TYPE_FIRST})[ \t]+(?:{_ROMANCE_PARTICLE}[ \t]+)*{_CAP}"
    rf"(?:[ \t]+(?:{_ROMANCE_PARTICLE}[ \t]+)*{_CAP}){{0,3}},?[ \t]+(?:n[º°o]\.?[ \t]*)?\d{{1,5}}[a-zA-Z]?\b"
    rf"{_TAIL}"
)
_FRENCH_TYPE = (
    r"rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|cours|square|passage|voie|sentier|"
    r"faubourg"
)
_FRENCH_PARTICLE = r"(?:(?:de la|du|des|de|la|le|les)[ \t]+|[ld]['’])"
_FRENCH = (
    rf"\b\d{{1,4}}(?:[ \t]?(?:bis|ter)\b)?,?[ \t]+(?i:{_FRENCH_TYPE})[ \t]+{_FRENCH_PARTICLE}*{_CAP}"
    rf"(?:[ \t]+{_FRENCH_PARTICLE}*{_CAP}){{0,4}}{_TAIL}"
)
# Polish, Czech and Slovak streets: an abbreviated type first ("ul. Marszałkowska 84/92",
# "al. Jerozolimskie 123A", "os. Kościuszkowskie 12/4", "pl. Zbawiciela 3"); "et al. Smith 2020" is
# a citation, not an avenue.
_SLAVIC_TYPE_FIRST = r"ul\.|al\.|os\.|pl\.|ulica|aleja|osiedle|plac|nám\.|náměstí|ulice"
_SLAVIC = (
    rf"(?<!\bet[ \t])\b(?:{_SLAVIC_TYPE_FIRST})[ \t]+{_CAP}(?:[ \t]+{_CAP}){{0,3}}"
    rf"[ \t]+{_HOUSE_NUMBER}\b{_TAIL}"
)
# German streets named with a preposition ("Am Sandtorkai 50", "An der Alster 12", "Im Tal 4"):
# these words start ordinary sentences too, so only with the postcode and city after the number.
_GERMAN_PREPOSITION = (
    rf"\b(?:Am|An[ \t]+der|An[ \t]+den|Im|In[ \t]+der|Auf[ \t]+dem|Auf[ \t]+der|Zum|Zur|Unter[ \t]+den)"
    rf"[ \t]+{_CAP}(?:[ \t]+{_CAP})?{_NUMBER_AFTER}{_EUROPEAN_TAIL}"
)
_SLAVIC_HINTS = ("ul.", "al.", "os.", "pl.", "ulic", "alej", "osiedl", "plac", "nám")
_PO_BOX = (
    r"\b(?:P\.?[ \t]?O\.?[ \t]?Box|Post[ \t]+Office[ \t]+Box|Postfach|Postbus|"
    r"Apartado(?:[ \t]+de[ \t]+Correos)?|Casella[ \t]+Postale|Boîte[ \t]+Postale)"
    rf"[ \t]+\d(?:[\d ]{{0,12}}\d)?\b{_TAIL}"
)
# A number and a street name with no suffix, anchored by a postcode: "14 Deansgate, Manchester M3 2BA".
_POSTCODE_ANCHORED = (
    rf"{_HOUSE_NUMBER}[ \t]+(?:{_CAP}[ \t]+){{0,2}}{_CAP},[ \t]*{_CITY}"
    rf"(?:[ \t]+{_UK_POSTCODE}|,[ \t]*[A-Z]{{2}}[ \t]+\d{{5}}(?:-\d{{4}})?)\b"
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(source))
    for rule, source in (
        ("street_english", _ENGLISH),
        ("street_germanic", _GERMANIC),
        ("street_germanic_hyphenated", _GERMANIC_HYPHENATED),
        ("street_romance", _ROMANCE),
        ("street_french", _FRENCH),
        ("street_slavic", _SLAVIC),
        ("street_german_preposition", _GERMAN_PREPOSITION),
        ("po_box", _PO_BOX),
        ("street_postcode", _POSTCODE_ANCHORED),
    )
)


def find(scan: Scan) -> Iterator[Candidate]:
    hyphenated = bool(_HYPHENATED_HINT.search(scan.text))
    for rule, pattern in _PATTERNS:
        if rule == "street_germanic_hyphenated" and not hyphenated:
            continue  # a cheap search spares the costlier pattern on almost every text
        if rule == "street_slavic" and not any(hint in scan.text.lower() for hint in _SLAVIC_HINTS):
            continue
        for match in pattern.finditer(scan.text):
            start, end = match.span()
            end = start + len(match.group().rstrip(" \t,.-"))
            if match.group().endswith(".") and re.search(r"\b(?:St|Ave|Rd|Dr|Blvd|Str)\.$", match.group()):
                end = match.end()
            yield Candidate("address", start, end, rule, PRIORITY)
