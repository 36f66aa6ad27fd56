"""The words people write before a personal or financial identifier, in the languages SAM meets.

A number after one of these labels is an identifier even when no check digit proves it: the
label says what it is ("Steuer-ID 12 345 678 901", "passport no. C01X00T47", "sort code
12-34-56"). Each label belongs to one subkind (national_id, passport, iban, tax_number,
customer_number, account_number); the subkind only names the rule in the findings, all of them are
redacted as "[id]".

Labels that are everyday words on their own ("policy", "contract", "client", "tax", "card") count
only with a word that makes them a number ("policy no.", "contract number", "client ID").
"""

from __future__ import annotations

import re

# "number", "no.", "nr", "#", "ID" in the languages of the labels below. Used after a label
# that needs one, and skipped after any label.
NUMBER_WORDS = (
    r"numbers?|num\.?|no\.?|nos\.?|nr\.?|n[°º]\.?|#|id|ids|code|ref(?:erence)?|nummer|numéro|número|numero|"
    r"numer|nro\.?|núm\.?|number|n\.[°º]|n\.o\.?|numarası|numarasi|référence|referencia|riferimento|nummern"
)
_N = rf"(?:[ \t_-]*(?:{NUMBER_WORDS}))"  # a number word after the label ("tax_id", "customer-no")
_SEP = r"[ \t.-]?"  # "NI number", "NI-number", "N.I. number"

# subkind -> label alternatives (regex fragments, matched case-insensitively between word boundaries)
LABELS: dict[str, tuple[str, ...]] = {
    "national_id": (
        rf"ssn|social[ \t]+security(?:{_N})?|social[ \t]+insurance(?:{_N})?|(?-i:SIN)(?:{_N})?|",
        rf"national[ \t]+insurance(?:{_N})?|ni{_SEP}(?:number|no\.?)|nino|",
        rf"national[ \t]+id(?:entity)?(?:[ \t]+card)?(?:{_N})?|national[ \t]+identification(?:{_N})?|",
        rf"identity[ \t]+(?:card|document)(?:{_N})?|id[ \t-]?card(?:{_N})?|id[ \t_]+(?:number|no\.?|nr\.?)|",
        rf"(?:identity|travel|id)?[ \t_]?doc(?:ument)?(?:{_N})|",
        r"rijksregister(?:nummer)?|(?:numéro[ \t]+de[ \t]+)?registre[ \t]+national|",
        r"numéro[ \t]+d['’]inscription(?:[ \t]+au[ \t]+répertoire)?|",
        rf"personal[ \t]+(?:id(?:entification)?|identity)(?:{_N})?|personal[ \t]+(?:number|code)|",
        r"bsn|burgerservicenummer|sofinummer|sofi-nummer|",
        r"personalausweis(?:nummer|-?nr\.?)?|ausweis(?:nummer|-?nr\.?)|identifikationsnummer|",
        r"sozialversicherungs(?:nummer|-?nr\.?)|sv-?(?:nummer|nr\.?)|rentenversicherungsnummer|",
        r"ahv(?:-?(?:nummer|nr\.?))?|avs(?:[ \t]+(?:n[°º]|number|numéro))?|versichertennummer|",
        r"(?:numéro|n[°º])[ \t]+de[ \t]+sécurité[ \t]+sociale|sécurité[ \t]+sociale|",
        r"(?-i:NIR)|numéro[ \t]+insee|",
        r"carte[ \t]+(?:d['’]identité|vitale)(?:[ \t]+n[°º])?|(?-i:CNI)|",
        r"(?-i:DNI|NIE|NIF)|documento[ \t]+(?:nacional[ \t]+)?de[ \t]+identidad|",
        r"número[ \t]+de[ \t]+identidad|",
        r"cédula(?:[ \t]+de[ \t]+(?:identidad|ciudadanía))?|cedula|(?-i:CPF|RG)|curp|",
        r"codice[ \t]+fiscale|c\.f\.|carta[ \t]+d['’]identità|",
        r"pesel|dowód(?:[ \t]+osobisty)?|numer[ \t]+dowodu(?:[ \t]+osobistego)?|",
        r"personnummer|personnr\.?|person-?nummer|fødselsnummer|fodselsnummer|cpr(?:-?(?:nummer|nr\.?))?|",
        r"henkilötunnus|hetu|isikukood|asmens[ \t]+kodas|personas[ \t]+kods|",
        r"rodné[ \t]+číslo|rodne[ \t]+cislo|",
        r"(?-i:EGN|CNP|OIB)|emšo|emso|amka|tc[ \t]+kimlik(?:[ \t]+(?:no|numarası))?|kimlik(?:[ \t]+no)?|",
        r"aadhaar(?:[ \t]+(?:number|no\.?|card))?|nric|hkid|mykad|teudat[ \t]+zehut|",
        r"medicare(?:{_N})?|nhs(?:{_N})|health[ \t]+(?:insurance|card)(?:{_N})|",
        r"kranken-?versicher(?:ten|ungs)-?(?:nummer|nr\.?)|(?-i:PPSN?)(?:{_N})?|(?-i:RRN)|"
        r"resident[ \t]+registration(?:{_N})?|",
        r"(?:מספר[ \t]+)?(?:תעודת[ \t]+זהות|זהות)|ת\.ז\.?|(?-i:My[ \t]?Number)|kennitala|(?-i:SNILS)|снилс|"
        r"(?-i:NIK|KTP|CNIC|NIN)|sa[ \t]+id(?:{_N})?|id[ \t]+nummer|legitimatie",
    ),
    "passport": (
        rf"passport(?:{_N})?|passports|pass-?nr\.?|pass-?nummer|passnummer|reisepass(?:nummer|-?nr\.?)?|",
        r"(?:numéro|n[°º])[ \t]+(?:de[ \t]+|du[ \t]+)?passeport|passeport|",
        r"(?-i:Pass)(?=[ \t]+[A-Z]{0,2}\d)|(?:número[ \t]+de[ \t]+)?pasaporte|"
        r"(?:numero[ \t]+(?:di|del)[ \t]+)?passaporto|passaporte|",
        r"(?:numer[ \t]+)?paszport(?:u)?|paspoort(?:nummer)?|passi|pasaport|(?:номер[ \t]+)?паспорта?|"
        r"διαβατήριο|דרכון|جواز[ \t]+السفر|",
        rf"travel[ \t]+document(?:{_N})?",
    ),
    "iban": (
        r"iban(?:-?(?:nummer|nr\.?|number|no\.?|code))?",
    ),
    "tax_number": (
        rf"tax[ \t]+(?:id(?:entification)?|identifier|file|registration|reference|payer)(?:{_N})?|",
        rf"tax(?![ \t_-]*code)(?:{_N})|taxpayer(?:[ \t]+id(?:entification)?)?(?:{_N})?|"
        rf"(?-i:TIN|TFN|UTR|EIN|ITIN)|",
        r"unique[ \t]+taxpayer[ \t]+reference|employer[ \t]+identification(?:[ \t]+number)?|",
        rf"vat(?:[ \t]+(?:id|reg(?:istration)?))?(?:{_N})?|",
        r"ust\.?-?id(?:nr\.?)?|ust-?idnr\.?|umsatzsteuer-?(?:identifikations)?(?:nummer|-?id)|",
        r"steuer-?(?:nummer|nr\.?|id|identifikationsnummer)|steueridentifikationsnummer|idnr\.?|",
        r"steuerliche[ \t]+identifikationsnummer|",
        r"(?:numéro|n[°º])[ \t]+(?:d['’]identification[ \t]+)?fiscal|numéro[ \t]+de[ \t]+tva|"
        r"n[°º][ \t]+(?:de[ \t]+)?tva|tva(?:[ \t]+intracommunautaire)?|(?-i:SPI)|siren|siret|",
        r"(?-i:NIF|CIF|CUIT|CUIL|RUT|RUC|NIT)|identificación[ \t]+fiscal|número[ \t]+fiscal|",
        r"número[ \t]+de[ \t]+contribuinte|contribuinte|",
        rf"business(?:[ \t]+(?:number|no\.?|registration(?:{_N})?))|(?-i:BN)|"
        rf"(?-i:CVR)(?:-?(?:nr\.?|nummer))?|(?-i:SE)-?(?:nr\.?|nummer)|",
        r"partita[ \t]+iva|p\.[ \t]?iva|",
        r"(?-i:NIP)|regon|btw(?:-?(?:nummer|nr\.?|id))?|fiscaal[ \t]+nummer|rsin|",
        r"organisationsnummer|org\.?[ \t]?nr\.?|(?-i:ΑΦΜ|ИНН)|vergi(?:[ \t]+(?:kimlik|numarası|no))+|"
        r"momsnummer|moms(?:-?nr\.?)|skattenummer|skatteregistreringsnummer|y-tunnus|alv-?numero|",
        r"gst(?:in)?(?:{_N})?|(?-i:ABN|ACN|IRD|NPWP|INN)(?:{_N})?|(?-i:PAN)(?:[ \t]+card)?(?:{_N})?",
    ),
    "customer_number": (
        rf"customer(?:{_N})|client(?:{_N})|member(?:ship)?(?:{_N})|subscriber(?:{_N})|",
        rf"polic(?:y|ies)(?:{_N})|insurance(?:{_N})|contract(?:{_N})|patient(?:{_N})|",
        rf"loyalty(?:[ \t]+card)?(?:{_N})?|frequent[ \t]+flyer(?:{_N})?|rewards?(?:{_N})|",
        r"kunden-?(?:nummer|nr\.?)|kundennr\.?|vertrags-?(?:nummer|nr\.?)|versicherungs-?(?:nummer|nr\.?)|",
        r"policen-?(?:nummer|nr\.?)|mitglieds-?(?:nummer|nr\.?)|",
        r"versicherungsschein(?:-?(?:nummer|nr\.?))?|",
        r"(?:número|n\.?[º°])[ \t]+d[ao][ \t]+(?:apólice|cliente|contrato)|apólice|",
        r"(?:numéro|n[°º]|référence)[ \t]+(?:de[ \t]+|du[ \t]+)?"
        r"(?:client|contrat|police|adhérent|d['’]adhérent)|",
        r"(?:número|n[º°.]?)[ \t]+de[ \t]+(?:cliente|contrato|póliza|poliza|socio|afiliado)|",
        r"(?:numero|codice|n\.)[ \t]+(?:di[ \t]+)?(?:cliente|contratto|polizza|socio|tessera)|",
        r"klant-?(?:nummer|nr\.?)|contract-?nummer|polis-?nummer|lid-?nummer|",
        r"numer[ \t]+(?:klienta|umowy|polisy|członkowski)|kund-?nummer|kunde-?nummer|avtalsnummer|"
        r"asiakasnumero",
    ),
    "account_number": (
        rf"(?:bank[ \t]+)?account(?:{_N})?|acct(?:{_N})?|a/c(?:{_N})?|",
        rf"(?:checking|savings|current|bank|deposit)[ \t]+account|bank[ \t]+(?:details|account)(?:{_N})?|",
        r"savings|checking|",
        r"konto-?(?:nummer|nr\.?)|kontonr\.?|kontonummer|bankkonto|konto|",
        r"(?:número[ \t]+da[ \t]+)?conta(?:[ \t]+(?:corrente|bancária|poupança))?|",
        r"(?:номер[ \t]+)?(?:лицевого[ \t]+)?сч[её]та|hesap(?:[ \t]+(?:no|numarası))?|",
        r"(?:numéro|n[°º])[ \t]+de[ \t]+compte|compte[ \t]+(?:bancaire|n[°º])|(?-i:RIB)|",
        r"(?:número|n[º°.]?)[ \t]+de[ \t]+cuenta|cuenta(?:[ \t]+bancaria)?|clabe|(?-i:CBU)|",
        r"(?:numero|n\.)[ \t]+(?:di[ \t]+)?conto(?:[ \t]+corrente)?|conto[ \t]+corrente|",
        r"rekening-?(?:nummer|nr\.?)|rekeningnummer|",
        r"numer[ \t]+(?:konta|rachunku)|rachunek(?:[ \t]+bankowy)?|",
        r"tilinumero|",
        rf"(?:credit|debit|bank)[ \t]+card(?:{_N})?|card(?:{_N})|kartennummer|karten-?nr\.?|"
        r"(?:numéro|n[°º])[ \t]+de[ \t]+carte|(?:número[ \t]+de[ \t]+)?tarjeta|",
        r"(?:numero[ \t]+(?:di[ \t]+)?)?carta[ \t]+di[ \t]+credito",
    ),
}

_ALTERNATIVES = "|".join(
    rf"(?P<{subkind}>{''.join(fragments)})" for subkind, fragments in LABELS.items()
)
# Labels in scripts without spaces between words: no word boundary around them ("私の旅券番号").
CJK_LABELS: dict[str, str] = {
    "national_id": r"マイナンバー|個人番号|身份证(?:号码|号)?|居民身份证|주민등록번호|외국인등록번호",
    "passport": r"旅券番号|パスポート番号|护照号码|护照号|護照號碼|여권번호|여권",
    "tax_number": r"法人番号|税号|纳税人识别号|统一社会信用代码|사업자등록번호|사업자번호",
    "customer_number": (
        r"会員番号|顧客番号|お客様番号|契約番号|证券号|保单号|客户号|客户编号|会员号|고객번호|회원번호|계약번호"
    ),
    "account_number": r"口座番号|账号|帐号|银行账号|账户号码|계좌번호",
}
CJK_LABEL = re.compile("|".join(rf"(?P<{k}>{v})" for k, v in CJK_LABELS.items()))

#: A label at a word start; group names say the subkind. Longer spellings come first within a
#: subkind, and regex alternation takes the first that matches, so e.g. "passport number" is read
#: whole. An underscore may join it to other words, as in keys ("customer_number", "iban_de").
LABEL = re.compile(rf"(?<![^\W_])(?<![/-])(?:{_ALTERNATIVES})(?![^\W_])", re.IGNORECASE)


# The words that can start an alternative of LABELS: at a fragment's start or after "|", "(?:",
# "(?-i:" or an optional part ("(?:número[ \t]+de[ \t]+)?pasaporte"), escapes such as "\\t" removed.
_SOURCE = re.sub(r"\\[A-Za-z]", " ", "|".join("|".join(f"|{x}" for x in f) for f in LABELS.values()))
# Less the words that only occur inside labels, after their first word ("número de …", "gstin").
_WORDS = [w.lower() for w in re.findall(r"(?:(?<=[|:?])|(?<=\(\?-i:))([^\W\d_]+)", _SOURCE)
          if w.lower() not in {"d", "de", "di", "du", "da", "do", "in", "no", "u"}]
#: What a word that starts a label starts with: every label starts with a word written out in
#: LABELS, so one of its first one, two or three letters is in the matching set ("n" for "n°",
#: "sv" for "SV-Nummer", "pas" for "passport"). Testing a word against these sets is far cheaper
#: than trying LABEL there, and gives a superset of the places LABEL can match.
LABEL_STARTS: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
    frozenset(w for w in _WORDS if len(w) == 1),
    frozenset(w for w in _WORDS if len(w) == 2),
    frozenset(w[:3] for w in _WORDS if len(w) >= 3),
)


def may_start_label(word: str) -> bool:
    """Whether a label may start with `word` (a run of letters at a word start)."""
    word = word.lower()
    one, two, three = LABEL_STARTS
    return word[:1] in one or word[:2] in two or word[:3] in three


def subkind_of(match: re.Match[str]) -> str:
    """The subkind whose label `match` (a match of LABEL) found."""
    return next(name for name, value in match.groupdict().items() if value is not None)
