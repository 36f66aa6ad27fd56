"""Redaction of personal and financial identifiers: national ids, passports, IBANs, tax numbers,
customer and account numbers of many countries, with a label in many languages or, without one,
when their check digits validate; and the numbers that only look like them, left alone.

Pure Python: none of these tests touches the database.
"""

from __future__ import annotations

import re

import pytest

from governance.redaction import redact_text
from governance.redaction.id_labels import LABEL, may_start_label


def ids_in(text: str) -> list[str]:
    return [text[f.start:f.end] for f in redact_text(text).findings if f.kind == "id"]


def kinds_in(text: str) -> list[str]:
    return [f.kind for f in redact_text(text).findings]


# --- labelled: the label says what the number is -----------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    # national ids
    ("US: my SSN is 770-65-5142, use it for the W-2.", "770-65-5142"),
    ("GB: Her NI number is QQ 12 34 56 C.", "QQ 12 34 56 C"),
    ("NL: BSN 123456782 staat op de loonstrook.", "123456782"),
    ("DE: Meine Steuer-ID lautet 12 345 678 901.", "12 345 678 901"),
    ("DE: Personalausweisnummer L01X00T47, gültig bis 2031.", "L01X00T47"),
    ("PL: PESEL 44051401359 w formularzu.", "44051401359"),
    ("SE: personnummer 811228-9874 i ansökan.", "811228-9874"),
    ("BE: Rijksregisternummer 95091357526", "95091357526"),
    ("FR: numéro de sécurité sociale 2 93 11 75 686 908 39", "2 93 11 75 686 908 39"),
    ("IL: מספר תעודת זהות: 110191806", "110191806"),
    ("JP: マイナンバー（個人番号）: 2870 0048 6539", "2870 0048 6539"),
    ("AE: Emirates ID 784-1985-1234567-1 on file.", "784-1985-1234567-1"),
    ("IT: Carta d'identità n. CA00000AA rilasciata a Roma", "CA00000AA"),
    ("US: Driver's license number D1234567, expires 2029.", "D1234567"),
    # passports
    ("Passport no. C01X00T47, expires 2030.", "C01X00T47"),
    ("Reisepassnummer C4J9L0M1R", "C4J9L0M1R"),
    ("Pasaporte mexicano G03606344, vigencia 6 años.", "G03606344"),
    ("Passaporte brasileiro nº BG988109", "BG988109"),
    ("护照号码：E13762598", "E13762598"),
    ('{"doc_type":"passport","doc_number":"K6337024A"}', "K6337024A"),
    # tax numbers
    ("EIN 12-3456789 for the 1099.", "12-3456789"),
    ("NIF de la sociedad: B27799295.", "B27799295"),
    ("tax_id=10-7564448 country=US", "10-7564448"),
    ("CVR-nr. 86841169 på fakturaen.", "86841169"),
    ("RFC: GODE561231GR8", "GODE561231GR8"),
    # customer and account numbers
    ("Kundennummer: KD-2023-1187", "KD-2023-1187"),
    ("Policy number POL-235237171, renewal due 2024-10-01.", "POL-235237171"),
    ("Référence contrat EDF : 4540798745", "4540798745"),
    ("会員番号：3914696941", "3914696941"),
    ("Account number on the electricity bill: 144 371 027 239", "144 371 027 239"),
    ("Konto: 7631126125 (Nordea).", "7631126125"),
    ("CLABE interbancaria: 957785271096829243", "957785271096829243"),
    ("Singapore DBS savings 080-683979-6", "080-683979-6"),
    # "Nº" reads "No" once normalised
    ("Nº de cuenta: 0049 1500 05 1234567890", "Nº de cuenta: [id]"),
])
def test_a_labelled_identifier_is_an_id(text, value):
    if "[id]" in value:
        assert redact_text(text).text == value
    else:
        assert value in ids_in(text)


def test_a_value_before_its_label_is_an_id():
    assert ids_in("X1234567 is her passport number.") == ["X1234567"]
    assert ids_in("Use 998877 (customer number) for the refund.") == ["998877"]


def test_a_second_value_of_the_same_shape_in_the_sentence_is_an_id_too():
    text = "first PESEL 60092793529, then corrected to 73052392038."
    assert ids_in(text) == ["60092793529", "73052392038"]


def test_a_column_headed_by_a_label_is_redacted_row_by_row():
    text = "guest,passport,checkin\nA,610189970,2024-05-03\nB,96MS23781,2024-05-03\n"
    assert ids_in(text) == ["610189970", "96MS23781"]


def test_bank_routing_codes_are_not_personal_identifiers():
    text = "Direct deposit: routing 021000021, sort code 20-32-06, account 2500799753."
    assert ids_in(text) == ["2500799753"]
    assert "phone" not in kinds_in(text)


# --- unlabelled: check digits and a specific format --------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Transfer to GB29 NWBK 6016 1331 9268 19 by Friday.", "GB29 NWBK 6016 1331 9268 19"),
    ("IBAN: DE89 3704 0044 0532 0130 00 EUR", "DE89 3704 0044 0532 0130 00"),
    ("Pay DE89370400440532013000 today.", "DE89370400440532013000"),
    ("Use 123-45-6789 for the form.", "123-45-6789"),
    ("Il mio è RSSMRA85T10A562S.", "RSSMRA85T10A562S"),
    ("DNI 12345678Z y NIE X1234567L.", "12345678Z"),
    ("CPF 123.456.789-09 no cadastro.", "123.456.789-09"),
    ("VAT DE136695976 on the invoice.", "DE136695976"),
    ("AHV 756.9217.0769.85 auf der Lohnabrechnung.", "756.9217.0769.85"),
    ("Visa 4111 1111 1111 1111 expires 12/27", "4111 1111 1111 1111"),
])
def test_an_unlabelled_identifier_with_valid_check_digits_is_an_id(text, value):
    assert value in ids_in(text)


def test_an_iban_in_print_form_with_a_slip_in_its_check_digits_is_still_an_id():
    assert ids_in("Transfer to DE89 3704 0044 0532 0130 01 please") == ["DE89 3704 0044 0532 0130 01"]


def test_an_id_is_not_claimed_as_a_phone_number():
    text = "NIP firmy: 404-608-66-20, REGON w załączniku."
    assert redact_text(text).text == "NIP firmy: [id], REGON w załączniku."


# --- look-alikes: left alone ------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Upgraded the service from 2.31.4 to 2.32.0; node is pinned at 20.11.1.",
    "Reverted commit 3f9a2c7e1b4d8f0a6c5e2d9b7a1f3e8c4d6b2a90 because it broke the migration.",
    "Release train: code freeze 2024-11-18, RC 2024-11-25, GA 2024-12-02.",
    "Q3 revenue was $12,480,392.17, up 14.2% from $10,929,771.04.",
    "Gesamtbetrag: 1.234.567,89 EUR inkl. 19 % MwSt.",
    "The book is ISBN 978-3-16-148410-0 (2nd edition), also listed as 3161484100.",
    "Restock SKU 4006381333931 (EAN) and SKU WH-1000XM5/B before Black Friday.",
    "CI run #48213957 failed on step 7; rerun as build 48213958 passed.",
    "GitHub Actions run id 8123456789 (attempt 2) failed.",
    "2^31 - 1 = 2147483647 and 2^53 = 9007199254740992.",
    "Stock exchange codes: ISIN US0378331005 is on the watchlist, WKN 865985.",
    "Card on file ends in 4242; SSN on record shows as ***-**-6789 only.",
    "IBAN DE89 **** **** **** **30 00 — masked in the statement export.",
    "Template placeholder: SSN XXX-XX-XXXX, passport number ________.",
    "RFC 7231 defines the semantics; tax year 2023; account balance: 12,450.00 EUR.",
    "The passport photo must be 35x45 mm; the IBAN field holds 34 characters.",
    "Pass 12345678 to the function; savings 12000 last year.",
    "Stripe test card 4242 4242 4242 4242 always succeeds.",
    "Ethanol CAS 64-17-5, sodium chloride CAS 7647-14-5.",
    "Processed 123456782 rows in 41 s; 3 rejected.",
])
def test_numbers_that_only_look_like_identifiers_are_left_alone(text):
    assert redact_text(text).findings == ()


# --- the label prefilter ----------------------------------------------------------------------

@pytest.mark.parametrize("label", [
    "SSN", "n° de compte", "a/c no.", "SV-Nummer", "c.f.", "p.iva", "y-tunnus", "ID card", "Kundennummer",
    "numéro de passeport", "Número da apólice", "tax_id", "customer_no", "social_security_number",
])
def test_every_label_starts_with_a_word_the_prefilter_lets_through(label):
    match = LABEL.match(label)
    assert match is not None
    assert match.end() == len(label)
    first_word = re.match(r"[^\W\d_]+", label)  # a run of letters, as the recognizer reads words
    assert first_word is not None
    assert may_start_label(first_word.group())
