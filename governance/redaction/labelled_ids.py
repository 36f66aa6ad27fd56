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
from typing import NamedTuple

from .checksum_ids import valid_format
from .findings import Candidate
from .id_labels import CJK_LABEL, LABEL, LABEL_STARTS, NUMBER_WORDS, may_start_label, subkind_of
from .scan import Scan

# Above cue-based account ids (70): a label read with its grouped value is the longer, better answer.
PRIORITY = 74
# Below phones (60): a number a few words from a label may be a phone the phone rules have a cue for.
PRIORITY_FAR = 58

# Signs between a label and its value. A bracket without digits is skipped whole ("(BSN)"); one
# that holds the value is opened ("Passport (number 530927182)", "Passport: [X1234567]").
_SKIP_SIGNS = re.compile(
    r"""[ \t]*(?:["'’`*|]+|[:=#]|\.{2,}|…|_{2,}|\[(?=[A-Za-z0-9./ -]{4,40}\])|"""
    r"""\([^()\n\d]{1,30}\)|\((?=[^()\n]{0,20}\d[^()\n]*\))|\[(?!(?:id|phone|email|name|address|secret)\])[^\[\]\n\d]{1,30}\]|"""
    r"""[–—]|-(?=[ \t])|_|\.(?=[ \t])|(?<=[Nn][OoRr])\.(?=\d)|"""
    # An article or case ending glued to an acronym: "ЕГН-то", "CNP-ul", "IBAN'ım", "NIP-u".
    r"""[-'’][a-zà-öø-ÿışğа-яёѐ-џ]{1,4}(?![^\W\d_])|"""
    r"""/[ \t]*[^\W\d_][^\W\d_.-]{1,15})[ \t]*"""  # a second label: "SSN/ITIN:", "CPF/CNPJ"
)
# Words between a label and its value: "number", "is", "lautet", "est", "jest", "är" …
_SKIP_WORD = re.compile(
    rf"[ \t]*(?:{NUMBER_WORDS}|is|was|are|were|reads|lautet|lautete|ist|war|lauten|est|était|es|era|è|é|"
    r"jest|wynosi|to|är|var|er|on|luidt|zijn|de|da|do|del|du|di|серия|серии|серія|series)(?![^\W_])[ \t]*",
    re.IGNORECASE,
)
# Another word between label and value (an adjective, a company, "of the account").
# Not capitals right before digits: they start the value ("QQ 12 34 56 C").
_FILLER = re.compile(
    r"[ \t]*(?![A-Z]{1,4}[ \t]+\d)([^\W\d_][^\W\d_'’.-]{0,23})(?=[ \t]*[ \t:]|[ \t]*\r?\n)[ \t]*"
)
# Words after a label that say the number is not the labelled identifier but a count, a date,
# a size or an amount ("account created 20240315", "customer count 1200000").
_NOT_FILLERS = frozenset(
    """
    since until from created opened closed updated expires expired valid balance total limit count size
    has had have holds with grew reached age year years date dated amount photo holder holders page pages
    fee fees rows records users count total sum ends ending last first
    recovery backup verification security otp pin password passcode reset confirmation
    """.split()
)
# Of those, the ones that say so from anywhere between a far label and a number ("the account
# balance grew to 1200000"); the others ("opened", "last", "year") only right after the label.
# Words that call the number a stand-in ("4081… (fake, … not a real account)") count here too.
_NOT_BETWEEN = frozenset(
    """
    balance total limit count size has had holds grew reached age amount photo fee fees rows records users
    sum pages fake dummy sandbox fixture fixtures sample
    """.split()
)
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[./-](?=[A-Za-z0-9]))*")
# A further group after one space: digits in it, or capitals followed by another group, or a
# single closing capital.
# Not the start of an amount ("40-11-62 1,234.00", "USD 99.99").
_GROUP = re.compile(
    r" (?:(?=[A-Z]*\d)[A-Z0-9]{1,12}(?:-[A-Z0-9]{1,8})*(?![A-Z0-9]|[.,']\d)|"
    r"(?!(?:EUR|USD|GBP|CHF|PLN|SEK|NOK|DKK|JPY|CNY|INR|BRL|MXN|CAD|AUD|RUB|TRY|ZAR)(?![A-Z]))"
    r"[A-Z]{2,4}(?= [A-Z]{0,3}\d)|[A-Z](?![\w/-]))"
)
_DATE = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}([./])\d{1,2}\1\d{2,4}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}[./-](?:19|20)\d{2}"
)
_DATE_TIME = re.compile(r"(?:19|20)\d{2}-[01]\d-[0-3]\dT\d")
# A number of a year ("fattura 112/2024"), not an identifier.
_NUMBER_OF_YEAR = re.compile(r"\d{1,5}/(?:19|20)\d{2}")
_COMPACT_DATE = re.compile(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
_YEAR = re.compile(r"(?:19|20)\d{2}(?:[/-](?:\d{2}|(?:19|20)\d{2}))?")
_VERSION = re.compile(r"[vV]?\d{1,3}(?:\.\d{1,3}){1,3}")
_AMOUNT = re.compile(r"\d{1,3}(?:[.,']\d{3})+(?:[.,]\d{1,2})?|\d+[.,]\d{2}")
# After the value: a unit, a currency or a percentage says it is a quantity.
# Currencies by code, sign and name, in the languages of the labels, and loyalty points.
_CURRENCIES = (
    r"eur|euros?|usd|dollars?|gbp|pounds?|chf|francs?|franken|pln|zł|złotych|sek|nok|dkk|kr|kronor|kroner|"
    r"rub|рублей|руб|원|won|krw|inr|rupees?|rs|jpy|yen|円|元|yuan|rmb|cny|brl|reais|mxn|pesos?|lira|tl|"
    r"aud|cad|nzd|zar|huf|ft|czk|kč|vnd|đồng|dong|idr|rupiah|rp|uzs|so['’]m|php|thb|baht|myr|ringgit|rm|"
    r"sgd|hkd|twd|ngn|naira|kes|egp|sar|riyals?|aed|dirhams?|ils|shekels?|lei|bgn|uah|грн|kzt|tenge|"
    r"pkr|bdt|taka|lkr|ars|clp|cop|pen|soles|uyu"
)
QUANTITY_AFTER = re.compile(
    r"[ \t]*(?:%|€|\$|£|¥|₽|₹|₺|₩|₪|₫|₱|฿|₴|₦|₸|"
    rf"(?:{_CURRENCIES}|points?|pts|punkte|miles|meilen|pontos|puntos|"
    r"mm|cm|km|kg|mb|gb|kb|ms|px|bytes?|bits?)(?![^\W_]))",
    re.IGNORECASE,
)
# A count noun after a plain number ("1200 accounts", "48 pages"); after a grouped code such as a
# sort code ("20-32-06 Account number …") it is the next label.
_COUNT_AFTER = re.compile(
    r"[ \t]*(?:days?|hours?|users?|items?|times?|years?|months?|pages?|characters?|chars?|digits?|rows?|"
    r"records?|customers?|accounts?|members?|requests?|units?|pieces?|pcs|people|persons?)(?![^\W_])",
    re.IGNORECASE,
)
_DECIMALS_AFTER = re.compile(r"(?:[ .']\d{3})*[,.]\d{1,2}(?![\d.,])")
_DOTTED = re.compile(r"\d{1,3}(?:\.\d{3}){2,}")
_PLAIN_NUMBER = re.compile(r"\d+(?:[.,' ]\d+)*")
# A label whose value is already redacted ("account [id]", when the output is scanned again) has
# its value: it must not reach for another number further away.
_PLACEHOLDER_AFTER = re.compile(
    r"[^\w\n\[]{0,6}(?:(?:no|nr|number|num)\.?[^\w\n\[]{0,4})?\[(?:id|phone|email|name|address|secret)\]"
)
_CURRENCY_BEFORE = re.compile(
    r"[€$£¥₹₽₩₪₫₱฿₴₦₸₺]\s*$|\b(?:EUR|USD|GBP|CHF|INR|IDR|Rp|VND|RM|PHP|THB|NGN|TL)\.?\s*$"
)
# A value that starts with a currency ("charged RM 1234567").
_CURRENCY_FIRST = re.compile(rf"(?:{_CURRENCIES})[ .]", re.IGNORECASE)
# Where a sentence ends, for a second value under the same label.
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")
# A list of values under one label may go on after a semicolon ("Tax IDs: 12-3456789; 98-7654321").
_LIST_END = re.compile(r"[.!?](?:\s|$)|\n")
_CELL_SEPARATORS = ",;\t|"
# Labels that are also everyday words: the value needs six digits.
_WEAK_LABELS = frozenset(
    "account accounts acct savings checking konto conta cuenta hesap conto compte rek rek. neft imps rtgs "
    "cui účet сметка akaunti 普通 当座".split()
)
# Labels that are everyday words in some uses ("tax code 1257L" is a PAYE code; "Girokonto 500"):
# the value needs six digits too.
_WEAK_LABEL = re.compile(
    r"tax[ \t_-]+code|\w*konto|acc\.|ac[ \t]*(?:no\.?|#)|tili|contul|(?:žiro[ \t_-]+|tekući[ \t_-]+)?račun|"
    r"bankverbindung",
    re.IGNORECASE,
)
# Labels that name a document written with letters and digits; a number alone is something else.
_LETTERED_LABELS = frozenset({"RFC", "Pass"})
# A value right before a label: "123-45-6789 (SSN)", "X1234567 is her passport number".
_VALUE_BEFORE = re.compile(
    r"(?P<value>[A-Z0-9](?:[A-Z0-9]|[ ./-](?=[A-Z0-9]))*[A-Z0-9])[ \t]*"
    r"(?:\([ \t]*|[ \t]+(?:is|was|as|=)[ \t]+(?:(?:my|his|her|their|the|our|your|its|a|an)[ \t]+)?)$"
)
_DIGITS = re.compile(r"\d+")
# Subkinds whose label makes a routing code nearby part of an account, and how near (characters).
_ACCOUNT_SUBKINDS = frozenset({"account_number", "iban"})
_ROUTING_REACH = 150
# A label far from its value: the value is looked for in the rest of the sentence (or the start of
# it, before the label), this many characters at most.
_FAR_REACH = 100
_FAR_WORDS = 12
# A label whose sentence ends without a number: its value may open the next one (a question
# answered, a sentence about where the number is written), this far and this many words in.
_NEXT_REACH = 120
_NEXT_WORDS = 16
# How far after a labelled document number another of its exact shape is taken for one.
_SAME_DOCUMENT_REACH = 240
# Words that name another kind of number right before a value ("order 12345678").
_OTHER_NUMBER_BEFORE = re.compile(
    r"(?:\b(?:orders?|invoices?|inv|isbn|sku|serial|tracking|parcel|shipment|part|model|build|version|"
    r"release|ticket|case|receipt|transaction|batch|lot|job|run|flight|booking|confirmation|voucher|"
    r"coupon|licen[cs]e|key|commit|item|product|error|code|pin|otp|amount|room|table|seat|gate|"
    r"rechnung|rechnungs-?nummer|faktura|facture|factura|fattura|fatura|bestellung|bestell-?nummer|"
    r"auftrag|auftrags-?nummer|commande|pedido|ordine|zamówienie|sendung|lieferung|"
    # The same in more languages: order, ticket, shipment and tracking, article, barcode.
    r"ticket-?nummer|sendungs-?nummer|artikel-?nummer|bestelling|factuur|zending|suivi|colis|envoi|"
    r"seguimiento|rastreo|env[íi]o|spedizione|tracciamento|sipari[şs]i?|kargo|takip|ean|gtin|upc|"
    r"barcode|заказа?|посылки|трек-?номер|пошиљке|поруџбине)"
    r"|(?:订单|訂單|运单|運單|快递单?|快遞單?|维修单|維修單|工单|工單|注文|주문|송장|운송장)(?:号|號|番号|번호)?)"
    r"(?:[ \t]*(?:number|no\.?|nr\.?|num|id|#))?[ \t]*"
    r"(?:(?<!pin )(?:is|lautet|est|es|ist|era|war|was|是)[ \t]*)?[:#=：]?[ \t]*$"
    # A number word before the other word, as Slavic languages write it ("nr zamówienia").
    r"|\b(?:nr|no|numer|номер|број)\.?[ \t]+(?:zamówienia|zamowienia|przesyłki|заказа|посылки|"
    r"поруџбине|пошиљке)[ \t]*[:#=]?[ \t]*$",
    re.IGNORECASE,
)
# "Faktura VAT nr …": the label names an invoice's kind; "last 4 of SSN 6789": a masked value.
_INVOICE_BEFORE = re.compile(
    r"\b(?:faktur[ay]?|invoices?|rechnung|facture|factura|fattura|fatura)[ \t]+$|"
    r"\b(?:last|final)[ \t]*(?:4|four|digits)[ \t]+(?:digits[ \t]+)?of[ \t]+"
    r"(?:(?:my|the|your|his|her)[ \t]+)?$",
    re.IGNORECASE,
)
# An Indian IFSC names a branch in a public directory: never an account's value (docs/redaction.md).
_IFSC = re.compile(r"[A-Z]{4}0[A-Z0-9]{6}")
# A line break a label may stand before its value (a form: "Passport number:\nX1234567").
_NUMBER_KEY_NEXT = re.compile(r"[ \t]*\r?\n[ \t]*(?:no\.?|nr\.?|number|id)[ \t]*:", re.IGNORECASE)
_LINE_BREAK = re.compile(r"[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*(?:[-*>|][ \t]+)?")
_HEX = re.compile(r"[0-9a-f]{7,}")
# Letters, then only digits ("ab123456"): a document number typed in lower case, not a digest.
_LETTERS_THEN_DIGITS = re.compile(r"[a-z]{1,3}\d{5,}")
_WORD = re.compile(r"(?<![^\W_])[^\W\d_]+(?:['’][^\W\d_]+)?")
# Scripts written without spaces between words (and Thai): their labels are in CJK_LABEL.
_CJK = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    labels = sorted(_labels(text), key=lambda label: subkind_of(label) == "routing_code")
    labels = [label for label in labels
              if not _INVOICE_BEFORE.search(text, max(0, label.start() - 30), label.start())]
    accounts: list[int] = []  # where labelled account numbers and IBANs were found
    for label in labels:
        subkind = subkind_of(label)
        if subkind == "routing_code" and not _near(accounts, label.start()):
            continue  # a sort code or routing number alone locates a bank, not a person
        found = _value(text, label, subkind)
        if found is None:
            continue
        start, end, far = found.start, found.end, found.far
        if subkind in _ACCOUNT_SUBKINDS:
            bisect.insort(accounts, start)
        rule = f"{'account_number' if subkind == 'routing_code' else subkind}_label"
        # A value a few words from its label yields to a phone ("call the bank at 0800 … about my
        # account"): the phone rules have seen a phone cue there.
        yield Candidate("id", start, end, rule, PRIORITY_FAR if far else PRIORITY)
        for more_start, more_end in _same_shape_later(text, start, end):
            yield Candidate("id", more_start, more_end, rule, PRIORITY)
        if found.listed:
            for more_start, more_end in _listed_later(text, start, end):
                yield Candidate("id", more_start, more_end, rule, PRIORITY_FAR)
    if "\n" in text:
        if any(sep in text for sep in _CELL_SEPARATORS):
            yield from _table_columns(text)
        if "  " in text:
            yield from _aligned_columns(text)
    if "VALUES" in text.upper():
        yield from _sql_inserts(text)


class _Found(NamedTuple):
    """A labelled value: `far` when words stand between it and its label (it yields to a phone),
    `listed` when it is the first item of a list under the label (the others follow in find())."""

    start: int
    end: int
    far: bool
    listed: bool = False


def _value(text: str, label: re.Match[str], subkind: str) -> _Found | None:
    """The value `label` names: right after it (or on the next line, under a label that ends its
    line), right before it, or further away in its sentence when the value is unmistakable."""
    name = label.group()
    weak = _weak(name)
    found = _value_after(text, label.end())
    if found is not None and _is_identifier(text, found[0], found[1], subkind, fillers=found[2], label=name):
        return _Found(found[0], found[1], False)
    before = _value_before(text, label.start())
    if before is not None and _is_identifier(text, before[0], before[1], subkind, label=name):
        return _Found(before[0], before[1], False)
    if _PLACEHOLDER_AFTER.match(text, label.end()):
        return None
    for far in (_far_after(text, label.end()), _far_before(text, label.start())):
        if far is None or _after_another_label(text, far[0]):
            continue
        if _is_strong(text, *far, subkind, weak=weak) and _is_identifier(
                text, far[0], far[1], subkind, fillers=1, label=name):
            return _Found(far[0], far[1], True)
    # A header naming the kind over a list, one person a line ("Staff NINs for the pension
    # upload:\n1. Musa – 52017384926\n2. …"): the first item's value, the others in find().
    listed = _listed_first(text, label.end())
    if listed is not None and not _after_another_label(text, listed[0]) and _is_strong(
            text, *listed, subkind, weak=weak) and _is_identifier(
            text, listed[0], listed[1], subkind, fillers=1, label=name):
        return _Found(listed[0], listed[1], True, listed=True)
    # An everyday label ("account") reaches the next sentence only from a question ("which account
    # should the refund go to?").
    if not weak or _QUESTION_AFTER.match(text, label.end()):
        following = _next_sentence(text, label.end())
        # After an everyday label the answer must be written as a code, in groups ("027-493018-2"),
        # not as a plain number that may be an amount ("which account? I paid 31926819").
        if following is not None and weak and not _GROUPED.search(text, following[0], following[1]):
            following = None
        # _is_unmistakable asks more of the value than a filler word would (six digits).
        if following is not None and not _after_another_label(text, following[0]) and _is_unmistakable(
                text, *following, subkind) and _is_identifier(
                text, following[0], following[1], subkind, label=name):
            # The answer to a question that named the number ("which account …?\nA: the DBS one,
            # 027-493018-2") is that number even where it could be read as a phone.
            asked = "?" in text[label.end():following[0]]
            return _Found(following[0], following[1], not asked)
    return None


# A list item's marker: "1.", "2)", "-", "*", "•".
_ITEM_MARK = re.compile(r"[ \t]*(?:[-*•·]|\d{1,2}[.)])?[ \t]*")
_LIST_ITEMS = 20


def _listed_first(text: str, position: int) -> tuple[int, int] | None:
    """The value of the first item of a list under a label's line: the line holds only words after
    the label and ends with a colon, or ends with the label ("Directors – TINs")."""
    line_end = text.find("\n", position)
    if line_end < 0:
        return None
    rest = text[position:line_end].rstrip(" \t\r")
    if rest and (not rest.endswith(":") or not _only_words(rest)):
        return None
    return _item_value(text, line_end + 1)


def _item_value(text: str, line_start: int) -> tuple[int, int] | None:
    """The value of the list item starting at `line_start`: its first number, after words only
    (a name, a dash, a colon)."""
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    mark = _ITEM_MARK.match(text, line_start, line_end)
    position = mark.end() if mark else line_start
    for token in _TOKEN.finditer(text, position, line_end):
        if not any(ch.isdigit() for ch in token.group()):
            continue
        if not _only_words(text[position:token.start()]):
            return None
        return token.start(), groups_end(text, token.end())
    return None


def _listed_later(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The values of the list's next items, while each line holds one of the first value's shape."""
    shape = _shape(text[start:end])
    line_end = text.find("\n", end)
    for _ in range(_LIST_ITEMS):
        if line_end < 0:
            return
        found = _item_value(text, line_end + 1)
        if found is None or _shape(text[found[0]:found[1]]) != shape:
            return
        yield found
        line_end = text.find("\n", found[1])


def _near(positions: list[int], position: int) -> bool:
    i = bisect.bisect_left(positions, position - _ROUTING_REACH)
    return i < len(positions) and positions[i] <= position + _ROUTING_REACH


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
    # An elided article or preposition joined to the label ("d'Pass-Nummere", "l'IBAN"): the label
    # starts after the apostrophe.
    elided_words = [(position + len(elided) + 1, rest) for position, word in words if _ELISION.search(word)
                    for elided, rest in [_ELISION.split(word, maxsplit=1)] if len(elided) <= 2]
    if elided_words:
        words = sorted(words + elided_words)
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
    if text.startswith("-", position) and text[position + 1:position + 2].isdigit():
        position += 1  # glued to its label: "MRN-19951637"
    fillers = 0
    crossed = False  # a line break: a form's label above its value ("Passport number:\nX1234567")
    for _ in range(12):
        step = _SKIP_SIGNS.match(text, position) or _SKIP_WORD.match(text, position)
        if step and step.end() > position:
            position = step.end()
            continue
        # One word may stand between the label and the line break when the next line names the
        # number ("Passport details\nNo.: X1234567").
        # So may words that end in a colon ("the checking account below:\n\n4402 1183 9076").
        if not crossed and (not fillers or (fillers == 1 and _NUMBER_KEY_NEXT.match(text, position))
                            or text[:position].rstrip(" \t").endswith(":")):
            line_break = _LINE_BREAK.match(text, position)
            if line_break:
                position, crossed = line_break.end(), True
                continue
        filler = _FILLER.match(text, position)
        # No word of the next line counts as a filler: it starts something else.
        if not filler or crossed or fillers >= 4 or filler.group(1).lower() in _NOT_FILLERS:
            break
        fillers += 1
        position = filler.end()
    if fillers > 2 and not text[:position].rstrip().endswith(":"):
        return None
    while position < len(text) and text[position] in " \t":  # "Numéro de client  021659871"
        position += 1
    token = _TOKEN.match(text, position)
    if not token:
        return None
    return position, groups_end(text, token.end()), fillers


def groups_end(text: str, end: int) -> int:
    """Where a value whose first token ends at `end` ends, with the groups after it ("12 345 678 901")."""
    while group := _GROUP.match(text, end):
        end = group.end()
    return end


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
    if _weak(label) and digits < 6:
        return False  # "savings 1200 last year", "account 2048"
    if label in _LETTERED_LABELS and not letters:
        return False  # "RFC 7231" is a standard; a Mexican RFC holds letters ("GODE561231GR8")
    # Passports and identity cards mix capitals and digits ("P52KHP6GZ"); other numbers are digits.
    document = subkind in ("passport", "national_id") and letters and digits and digits + letters >= 8
    routing = subkind == "routing_code" and digits >= 3
    if digits < 4 and not document and not routing and not (
            subkind == "passport" and digits >= 2 and digits + letters >= 6):
        return False
    if fillers and digits < 6:
        return False
    # A word between label and value names another number ("Bankverbindung siehe Rechnung 2024-00123").
    if fillers and _OTHER_NUMBER_BEFORE.search(text, max(0, start - 30), start):
        return False
    if digits + letters > 40:
        return False
    if not value.strip("0 -./X"):  # a template: "XX00 0000 0000 0000", "000-00-0000"
        return False
    if _IFSC.fullmatch(value):
        return False
    # A lower-case letter means a word or a code identifier, except in a value that is mostly
    # digits ("c01x00t47", "12345678z", a Chilean RUT's check "k") and not a hex digest.
    if any(ch.islower() for ch in value) and not _lower_case_identifier(value, digits, label, subkind):
        return False
    if _DATE.fullmatch(value) or _COMPACT_DATE.fullmatch(value) or _NUMBER_OF_YEAR.fullmatch(value):
        return False
    if _DATE_TIME.match(value):  # "Account created 2024-03-11T10:22:33Z"
        return False
    # Identity numbers written with thousands dots ("Cédula No. 1.020.304.050", "DNI 12.345.678")
    # have the shape of an amount or a version; after an identity or tax label they are neither.
    # Customer and account numbers are written so too ("Kundennummer 78.563.950"), right after their label.
    dotted_id = (subkind in ("national_id", "tax_number")
                 or (subkind in ("customer_number", "account_number") and not fillers and not _weak(label))
                 ) and _DOTTED.fullmatch(value)
    # A branch code next to an account may read like a year ("agência 1981, conta 71637-7").
    if _YEAR.fullmatch(value) and subkind != "routing_code":
        return False
    if not dotted_id and (_VERSION.fullmatch(value) or _AMOUNT.fullmatch(value)):
        return False
    if _CURRENCY_BEFORE.search(text, max(0, start - 6), start) or _CURRENCY_FIRST.match(value):
        return False
    # Decimals after a number the value ends ("1 234 567,89 zł", "1.234.567,00 EUR", "1234567,50").
    if _PLAIN_NUMBER.fullmatch(value) and _DECIMALS_AFTER.match(text, end):
        return False
    if _PLAIN_NUMBER.fullmatch(value) and _COUNT_AFTER.match(text, end):
        return False
    return not QUANTITY_AFTER.match(text, end)


def reads_as_identifier(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], named by nothing, is not a date, a year, a version, an amount, a
    quantity or a count, nor right after a word naming another kind of number, a code or a PIN."""
    return _is_identifier(text, start, end, "customer_number") and not _OTHER_NUMBER_BEFORE.search(
        text, max(0, start - 30), start)


def _weak(label: str) -> bool:
    return label.lower() in _WEAK_LABELS or bool(_WEAK_LABEL.fullmatch(label))


def _lower_case_identifier(value: str, digits: int, label: str, subkind: str) -> bool:
    if value[-1] == "k" and not any(ch.islower() for ch in value[:-1]):
        return True
    # A passport or identity card typed in lower case: up to three letters, then digits ("pah903127").
    if subkind in ("passport", "national_id") and _LETTERS_THEN_DIGITS.fullmatch(value):
        return True
    if valid_format(value.upper()):  # "rssmra85t10a562s": a codice fiscale typed in lower case
        return True
    if digits < 5 or _weak(label) or (
            _HEX.fullmatch(value.lower()) and not _LETTERS_THEN_DIGITS.fullmatch(value)):
        return False
    return max(len(run) for run in re.findall(r"[a-z]+", value)) <= 2


def _far_after(text: str, position: int) -> tuple[int, int] | None:
    """The first number in the rest of the sentence after a label, if only words stand between."""
    stop = _SENTENCE_END.search(text, position)
    # A question answered right after it: "can u send the acct again? think it was 31926819".
    if stop and text[stop.start()] == "?" and _ANSWER.match(text, stop.end()):
        stop = _SENTENCE_END.search(text, stop.end())
    limit = min(stop.start() if stop else len(text), position + _FAR_REACH)
    for token in _TOKEN.finditer(text, position, limit):
        if not any(ch.isdigit() for ch in token.group()):
            continue
        between = text[position:token.start()]
        if not _only_words(between) or (token.start() > 0 and text[token.start() - 1] in "-/_."):
            return None
        return token.start(), groups_end(text, token.end())
    return None


def _far_before(text: str, position: int) -> tuple[int, int] | None:
    """The number closest before a label in its sentence, if only words stand between."""
    window_start = max(0, position - _FAR_REACH)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, window_start, position)]
    start = ends[-1] if ends else window_start
    tokens = [t for t in _TOKEN.finditer(text, start, position) if any(ch.isdigit() for ch in t.group())]
    if not tokens:
        return None
    token = tokens[-1]
    first = token
    # a grouped value ("4417 1234 5678"): its first group
    while len(tokens) > 1 and tokens[-2].end() + 1 == first.start() and text[tokens[-2].end()] == " ":
        tokens.pop()
        first = tokens[-1]
    if not _only_words(text[token.end():position]):
        return None
    if first.start() > 0 and text[first.start() - 1] in "-/_.":
        return None
    return first.start(), token.end()


_ELISION = re.compile("['’]")
_GROUPED = re.compile(r"\d[ /-]\d")
_QUESTION_AFTER = re.compile(r"[^.!?\n]{0,80}\?")


def _next_sentence(text: str, position: int) -> tuple[int, int] | None:
    """The first number of the sentence after the label's, when the label's sentence holds no digit
    ("… wollen die Ausweisnummer. Die steht oben rechts, bei mir LKX4R7M19", "which one be NIN
    again? Na 48213907516 dey my slip")."""
    stop = _SENTENCE_END.search(text, position)
    if stop is None or text[stop.start()] == "\n" or any(ch.isdigit() for ch in text[position:stop.start()]):
        return None
    if stop.start() - position > _FAR_REACH:
        return None
    end_of_next = _SENTENCE_END.search(text, stop.end())
    limit = min(end_of_next.start() if end_of_next else len(text), stop.end() + _NEXT_REACH)
    for token in _TOKEN.finditer(text, stop.end(), limit):
        if not any(ch.isdigit() for ch in token.group()):
            continue
        between = text[stop.end():token.start()]
        words = _WORD.findall(between)
        if len(words) > _NEXT_WORDS or "[" in between or any(w.lower() in _NOT_BETWEEN for w in words):
            return None
        if token.start() > 0 and text[token.start() - 1] in "-/_.":
            return None
        return token.start(), groups_end(text, token.end())
    return None


def _is_unmistakable(text: str, start: int, end: int, subkind: str) -> bool:
    """A value that reads as an identifier a sentence away from its label: eight digits or more, or
    a document number of capitals and digits, not right after a word naming another number."""
    value = text[start:end]
    digits = sum(ch.isdigit() for ch in value)
    letters = sum(ch.isalpha() for ch in value)
    document = (subkind in ("passport", "national_id") and digits >= 3 and letters
                and value.upper() == value and digits + letters >= 8)
    if digits < 8 and not document and not valid_format(value.upper()):
        return False
    return not _OTHER_NUMBER_BEFORE.search(text, max(0, start - 30), start)


_ANSWER = re.compile(
    r"[ \t]*(?:(?:i[ \t]+)?think[ \t]+)?(?:it['’]?s|it[ \t]+(?:is|was)|that['’]?s|that[ \t]+(?:is|was)|"
    r"es|c['’]est|ist|è|é)[ \t]",
    re.IGNORECASE,
)


def _only_words(between: str) -> bool:
    """Up to _FAR_WORDS words and punctuation, none of them naming a count, a date or an amount."""
    words = _WORD.findall(between)
    # A digit or a placeholder ("[id]": the label's own value, already redacted) in between.
    if len(words) > _FAR_WORDS or any(ch.isdigit() or ch in "[]" for ch in between):
        return False
    return not any(word.lower() in _NOT_BETWEEN for word in words)


def _after_another_label(text: str, start: int) -> bool:
    """Whether a label stands right before `start` ("BSB 062-000"): the value is that label's."""
    window = text[max(0, start - 40):start]
    return any(LABEL.fullmatch(window, m.start(), len(window.rstrip(" \t:#=")))
               for m in _WORD.finditer(window) if may_start_label(m.group()))


def _is_strong(text: str, start: int, end: int, subkind: str, *, weak: bool = False) -> bool:
    """A value that reads as an identifier without its label right beside it: six digits or more
    (seven after an everyday word such as "account"), or a document number mixing capitals and
    digits, not right after a word naming another number."""
    value = text[start:end]
    digits = sum(ch.isdigit() for ch in value)
    letters = sum(ch.isalpha() for ch in value)
    document = subkind in ("passport", "national_id") and digits >= 2 and letters and digits + letters >= 8
    if digits < (7 if weak else 6) and not document:
        return False
    return not _OTHER_NUMBER_BEFORE.search(text, max(0, start - 30), start)


def _shape(value: str) -> str:
    return re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", value))


def _same_shape_later(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Values later in the same sentence with the labelled value's exact shape (6+ digits)."""
    value = text[start:end]
    if sum(ch.isdigit() for ch in value) < 6:
        return
    stop = _LIST_END.search(text, end)
    limit = min(stop.start() if stop else len(text), end + 120)
    # Capitals and digits in one exact shape ("PA8297926" … "PA3439332" on the next line) are
    # another document of the same kind anywhere near, not only in the same sentence.
    if any(ch.isalpha() for ch in value) and len(value) >= 8:
        limit = min(len(text), end + _SAME_DOCUMENT_REACH)
    shape = _shape(value)
    for token in _TOKEN.finditer(text, end, limit):
        other_end = groups_end(text, token.end())
        if _shape(text[token.start():other_end]) == shape and _boundary(text, token.start(), other_end):
            yield token.start(), other_end


def _boundary(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before in "-/_") and not (after.isalnum() or after in "-/_")


def _label_in_header(name: str) -> re.Match[str] | None:
    """A label inside a short header cell ("Employee SSN", "Holder passport no."), unless a word
    says the column holds something else about it ("Passport expiry date", "Customer since")."""
    words = _WORD.findall(name)
    if len(name) > 40 or len(words) > 4 or any(word.lower() in _NOT_FILLERS for word in words):
        return None
    for word in _WORD.finditer(name):
        if may_start_label(word.group()):
            label = LABEL.match(name, word.start())
            if label:
                return label
    return None


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
            name = re.split(r": | - ", cell)[-1].strip().strip("\"'")
            if not any(may_start_label(word) for word in _WORD.findall(name)):
                continue
            label = LABEL.fullmatch(name) or _label_in_header(name)
            if label:
                columns[number] = subkind_of(label)
        if "routing_code" in columns.values() and not _ACCOUNT_SUBKINDS & set(columns.values()):
            columns = {n: subkind for n, subkind in columns.items() if subkind != "routing_code"}
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


# An SQL insert names its columns, then gives each row's values in the same order:
# "INSERT INTO payees (name, sort_code, account_no) VALUES ('Landlord Ltd', '34-87-36', '13935207')".
_SQL_INSERT = re.compile(
    r"\bINSERT[ \t\n]+INTO[ \t\n]+[\w.\"`\[\]]+[ \t\n]*\((?P<columns>[^()]{1,500})\)[ \t\n]*VALUES[ \t\n]*"
    r"(?P<rows>\([^()]{1,1000}\)(?:[ \t\n]*,[ \t\n]*\([^()]{1,1000}\))*)",
    re.IGNORECASE,
)
_SQL_ROW = re.compile(r"\(([^()]*)\)")
_SQL_ITEM = re.compile(r"'(?P<quoted>(?:[^']|'')*)'|(?P<bare>[^,\s]+)")


def _sql_inserts(text: str) -> Iterator[Candidate]:
    """Values of an SQL insert whose column is named by a label ("account_no", "passport")."""
    for insert in _SQL_INSERT.finditer(text):
        names = [name.strip().strip("\"`[]") for name in insert.group("columns").split(",")]
        columns = {}
        for number, name in enumerate(names):
            first_word = _WORD.match(name)
            if first_word and may_start_label(first_word.group()):
                label = LABEL.fullmatch(name) or _label_in_header(name.replace("_", " "))
                if label:
                    columns[number] = subkind_of(label)
        if "routing_code" in columns.values() and not _ACCOUNT_SUBKINDS & set(columns.values()):
            columns = {n: subkind for n, subkind in columns.items() if subkind != "routing_code"}
        if not columns:
            continue
        for row in _SQL_ROW.finditer(text, insert.start("rows"), insert.end("rows")):
            items = list(_SQL_ITEM.finditer(text, row.start(1), row.end(1)))
            if len(items) != len(names):
                continue
            for number, subkind in columns.items():
                item = items[number]
                group = "quoted" if item.group("quoted") is not None else "bare"
                start, end = item.span(group)
                if _TOKEN.fullmatch(text, start, end) and _is_identifier(text, start, end, subkind):
                    yield Candidate("id", start, end, f"{subkind}_column", PRIORITY)


_ALIGNED_CELL = re.compile(r"\S+(?: \S+)*")


def _aligned_columns(text: str) -> Iterator[Candidate]:
    """Values under a header cell that is a label, in columns aligned with spaces:

        Name        Passport     Country
        Anna Smith  X1234567     GB
    """
    lines = text.split("\n")
    offset = 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    for index, line in enumerate(lines[:-1]):
        if "  " not in line:
            continue
        cells = list(_ALIGNED_CELL.finditer(line))
        if len(cells) < 2:
            continue
        columns = {}
        for cell in cells:
            name = cell.group()
            first_word = _WORD.match(name)
            if first_word and may_start_label(first_word.group()):
                label = LABEL.fullmatch(name) or _label_in_header(name)
                if label and subkind_of(label) != "routing_code":
                    columns[cell.start()] = subkind_of(label)
        if not columns:
            continue
        for row_index in range(index + 1, len(lines)):
            row = lines[row_index]
            row_cells = {m.start(): m for m in _ALIGNED_CELL.finditer(row)}
            if len(row_cells) < 2:
                break
            for column, subkind in columns.items():
                found = row_cells.get(column)
                if found is None:
                    continue
                start, end = starts[row_index] + found.start(), starts[row_index] + found.end()
                # The next cell is not a unit of this one ("X1234567     GB"): the cell ends the text.
                if _TOKEN.fullmatch(text, start, end) and _is_identifier(text[:end], start, end, subkind):
                    yield Candidate("id", start, end, f"{subkind}_column", PRIORITY)
