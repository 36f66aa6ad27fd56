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
    r"numer|nro\.?|núm\.?|number|n\.[°º]|n\.o\.?|n\.(?=[ \t])|numarası|numarasi|"
    r"référence|referencia|riferimento|nummern"
)
_N = rf"(?:[ \t_-]*(?:{NUMBER_WORDS}))"  # a number word after the label ("tax_id", "customer-no")
_SEP = r"[ \t.-]?"  # "NI number", "NI-number", "N.I. number"

# subkind -> label alternatives (regex fragments, matched case-insensitively between word boundaries)
LABELS: dict[str, tuple[str, ...]] = {
    "national_id": (
        rf"ssn|social[ \t_-]+security(?:{_N})?|social[ \t_-]+insurance(?:{_N})?|(?-i:SIN)(?:{_N})?|",
        rf"national[ \t_-]+insurance(?:{_N})?|ni{_SEP}(?:number|no\.?)|nino|",
        rf"national[ \t_-]+id(?:entity)?(?:[ \t_-]+card)?(?:{_N})?|national[ \t_-]+identification(?:{_N})?|",
        rf"identity[ \t_-]+(?:card|document)(?:{_N})?|id[ \t-]?card(?:{_N})?|"
        rf"id[ \t_]+(?:number|no\.?|nr\.?)|",
        rf"(?:identity|travel|id)?[ \t_]?doc(?:ument)?(?:{_N})|",
        r"rijksregister(?:nummer)?|(?:numéro[ \t_-]+de[ \t_-]+)?registre[ \t_-]+national|",
        r"numéro[ \t_-]+d['’]inscription(?:[ \t_-]+au[ \t_-]+répertoire)?|",
        rf"personal[ \t_-]+(?:id(?:entification)?|identity)(?:{_N})?|personal[ \t_-]+(?:number|code)|",
        rf"driver['’]?s?[ \t_-]+licen[cs]e(?:{_N})?|führerschein(?:-?(?:nummer|nr\.?))?|"
        r"permis[ \t_-]+de[ \t_-]+conduire|adóazonosító(?:[ \t_-]+jel)?|személyi[ \t_-]+igazolvány|"
        r"(?-i:TAJ)(?:-?szám)?|رقم[ \t_-]+(?:الهوية|جواز[ \t_-]+السفر|الحساب)|الهوية|"
        r"emirates[ \t_-]+id|bsn|burgerservicenummer|sofinummer|sofi-nummer|",
        r"personalausweis(?:nummer|-?nr\.?)?|ausweis(?:nummer|-?nr\.?)|identifikationsnummer|",
        r"sozialversicherungs(?:nummer|-?nr\.?)|sv-?(?:nummer|nr\.?)|rentenversicherungsnummer|",
        r"ahv(?:-?(?:nummer|nr\.?))?|avs(?:[ \t_-]+(?:n[°º]|number|numéro))?|versichertennummer|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+sécurité[ \t_-]+sociale|sécurité[ \t_-]+sociale|",
        r"(?-i:NIR)|numéro[ \t_-]+insee|",
        r"carte[ \t_-]+(?:d['’]identité|vitale)(?:[ \t_-]+n[°º])?|(?-i:CNI)|",
        r"(?-i:DNI|NIE|NIF)|documento[ \t_-]+(?:nacional[ \t_-]+)?de[ \t_-]+identidad|",
        r"número[ \t_-]+de[ \t_-]+identidad|",
        r"cédula(?:[ \t_-]+de[ \t_-]+(?:identidad|ciudadanía))?|cedula|(?-i:CPF|RG)|curp|",
        r"codice[ \t_-]+fiscale|c\.f\.|carta[ \t_-]+d['’]identità|",
        r"pesel|dowód(?:[ \t_-]+osobisty)?|numer[ \t_-]+dowodu(?:[ \t_-]+osobistego)?|",
        r"personnummer|personnr\.?|person-?nummer|fødselsnummer|fodselsnummer|cpr(?:-?(?:nummer|nr\.?))?|",
        r"henkilötunnus|hetu|isikukood|asmens[ \t_-]+kodas|personas[ \t_-]+kods|",
        r"rodné[ \t_-]+číslo|rodne[ \t_-]+cislo|",
        r"(?-i:EGN|CNP|OIB)|emšo|emso|amka|tc[ \t_-]+kimlik(?:[ \t_-]+(?:no|numarası))?|"
        r"kimlik(?:[ \t_-]+no)?|",
        r"aadhaar(?:[ \t_-]+(?:number|no\.?|card))?|nric|hkid|mykad|teudat[ \t_-]+zehut|",
        r"medicare(?:{_N})?|nhs(?:{_N})|health[ \t_-]+(?:insurance|card)(?:{_N})|",
        r"kranken-?versicher(?:ten|ungs)-?(?:nummer|nr\.?)|(?-i:PPSN?)(?:{_N})?|(?-i:RRN)|"
        r"resident[ \t_-]+registration(?:{_N})?|",
        r"(?:מספר[ \t_-]+)?(?:תעודת[ \t_-]+זהות|זהות)|ת\.ז\.?|(?-i:My[ \t]?Number)|kennitala|(?-i:SNILS)|"
        r"снилс|"
        r"(?-i:NIK|KTP|CNIC|NIN)|sa[ \t_-]+id(?:{_N})?|id[ \t_-]+nummer|legitimatie",
    ),
    "passport": (
        rf"passport(?:{_N})?|passports|pass\.?-?nr\.?|pass-?nummer|passnummer|reisepass(?:nummer|-?nr\.?)?|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+(?:de[ \t_-]+|du[ \t_-]+)?passeport|passeport|",
        r"(?-i:Pass)(?=[ \t_-]+[A-Z]{0,2}\d)|(?:número[ \t_-]+de[ \t_-]+)?pasaporte|"
        r"(?:numero[ \t_-]+(?:di|del)[ \t_-]+)?passaporto|passaporte|",
        r"(?:numer[ \t_-]+)?paszport(?:u)?|paspoort(?:nummer)?|passi|pasaport|(?:номер[ \t_-]+)?паспорта?|"
        r"διαβατήριο|דרכון|جواز[ \t_-]+السفر|",
        rf"travel[ \t_-]+document(?:{_N})?",
    ),
    "iban": (
        r"iban(?:-?(?:nummer|nr\.?|number|no\.?|code))?",
    ),
    "tax_number": (
        rf"tax[ \t_-]+(?:id(?:entification)?|identifier|file|registration|reference|payer)(?:{_N})?|",
        rf"tax(?![ \t_-]*code)(?:{_N})|taxpayer(?:[ \t_-]+id(?:entification)?)?(?:{_N})?|"
        rf"(?-i:TIN|TFN|UTR|EIN|ITIN)|",
        r"unique[ \t_-]+taxpayer[ \t_-]+reference|employer[ \t_-]+identification(?:[ \t_-]+number)?|",
        rf"vat(?:[ \t_-]+(?:id|reg(?:istration)?))?(?:{_N})?|",
        r"ust\.?-?id(?:nr\.?)?|ust-?idnr\.?|umsatzsteuer-?(?:identifikations)?(?:nummer|-?id)|",
        r"steuer-?(?:nummer|nr\.?|id|identifikationsnummer)|steueridentifikationsnummer|idnr\.?|",
        r"steuerliche[ \t_-]+identifikationsnummer|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+(?:d['’]identification[ \t_-]+)?fiscal|numéro[ \t_-]+de[ \t_-]+tva|"
        r"n[°º][ \t_-]+(?:de[ \t_-]+)?tva|tva(?:[ \t_-]+intracommunautaire)?|(?-i:SPI)|siren|siret|",
        r"(?-i:NIF|CIF|CUIT|CUIL|RUT|RUC|NIT)|identificación[ \t_-]+fiscal|número[ \t_-]+fiscal|",
        r"número[ \t_-]+de[ \t_-]+contribuinte|contribuinte|",
        rf"business(?:[ \t_-]+(?:number|no\.?|registration(?:{_N})?))|(?-i:RFC)|(?-i:CNPJ)|cnpj|"
        rf"kvk(?:-?nummer)?|"
        rf"(?-i:CVR)(?:-?(?:nr\.?|nummer))?|(?-i:SE)-?(?:nr\.?|nummer)|",
        r"partita[ \t_-]+iva|p\.[ \t]?iva|",
        r"(?-i:NIP)|regon|btw(?:-?(?:nummer|nr\.?|id))?|fiscaal[ \t_-]+nummer|rsin|",
        r"organisationsnummer|org\.?[ \t]?nr\.?|(?-i:ΑΦΜ|ИНН)|vergi(?:[ \t_-]+(?:kimlik|numarası|no))+|"
        r"momsnummer|moms(?:-?nr\.?)|skattenummer|skatteregistreringsnummer|y-tunnus|alv-?numero|",
        r"gst(?:in)?(?:{_N})?|(?-i:ABN|ACN|IRD|NPWP|INN)(?:{_N})?|(?-i:PAN)(?:[ \t_-]+card)?(?:{_N})?",
    ),
    "customer_number": (
        rf"customer(?:{_N})|client(?:{_N})|member(?:ship)?(?:{_N})|subscriber(?:{_N})|",
        rf"polic(?:y|ies)(?:{_N})|insurance(?:{_N})|contract(?:{_N})|patient(?:{_N})|",
        r"miles[ \t]*&[ \t]*more(?:[ \t_-]+(?:number|no\.?|card))?|bahncard(?:-?nummer)?|"
        r"payback(?:-?nummer)?|"
        r"kunden-?id|identifiant[ \t_-]+client|(?:n[°º]|no\.?|numéro)[ \t_-]+(?:d['’])?abonné|vertragskonto|",
        rf"loyalty(?:[ \t_-]+card)?(?:{_N})?|frequent[ \t_-]+flyer(?:{_N})?|rewards?(?:{_N})|",
        r"kunden-?(?:nummer|nr\.?)|kundennr\.?|vertrags-?(?:nummer|nr\.?)|versicherungs-?(?:nummer|nr\.?)|",
        r"policen-?(?:nummer|nr\.?)|mitglieds-?(?:nummer|nr\.?)|",
        r"versicherungsschein(?:-?(?:nummer|nr\.?))?|",
        r"(?:número|n\.?[º°]|no\.?)[ \t_-]+d[ao][ \t_-]+(?:apólice|cliente|contrato)|apólice|",
        r"(?:numéro|n[°º]|no\.?|référence)[ \t_-]+(?:de[ \t_-]+|du[ \t_-]+)?"
        r"(?:client|contrat|police|adhérent|d['’]adhérent)|",
        r"(?:número|n[º°.]?|no\.?)[ \t_-]+de[ \t_-]+(?:cliente|contrato|póliza|poliza|socio|afiliado)|",
        r"(?:numero|codice|n\.)[ \t_-]+(?:di[ \t_-]+)?(?:cliente|contratto|polizza|socio|tessera)|",
        r"klant-?(?:nummer|nr\.?)|contract-?nummer|polis-?nummer|lid-?nummer|",
        r"numer[ \t_-]+(?:klienta|umowy|polisy|członkowski)|kund-?nummer|kunde-?nummer|avtalsnummer|"
        r"asiakasnumero",
    ),
    "account_number": (
        rf"(?:bank[ \t_-]+)?account(?:{_N})?|acct(?:{_N})?|a/c(?:{_N})?|",
        rf"(?:checking|savings|current|bank|deposit)[ \t_-]+account|"
        rf"bank[ \t_-]+(?:details|account)(?:{_N})?|",
        r"savings|checking|",
        r"konto-?(?:nummer|nr\.?)|kontonr\.?|kontonummer|bankkonto|konto|",
        r"(?:número[ \t_-]+da[ \t_-]+)?conta(?:[ \t_-]+(?:corrente|bancária|poupança))?|",
        r"(?:номер[ \t_-]+)?(?:лицевого[ \t_-]+)?сч[её]та|hesap(?:[ \t_-]+(?:no|numarası))?|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+compte|compte[ \t_-]+(?:bancaire|n[°º])|(?-i:RIB)|",
        r"(?:número|n[º°.]?|no\.?)[ \t_-]+de[ \t_-]+cuenta|cuenta(?:[ \t_-]+bancaria)?|clabe|(?-i:CBU)|",
        r"(?:numero|n\.)[ \t_-]+(?:di[ \t_-]+)?conto(?:[ \t_-]+corrente)?|conto[ \t_-]+corrente|",
        r"rekening-?(?:nummer|nr\.?)|rekeningnummer|",
        r"numer[ \t_-]+(?:konta|rachunku)|rachunek(?:[ \t_-]+bankowy)?|",
        r"tilinumero|",
        rf"(?:credit|debit|bank)[ \t_-]+card(?:{_N})?|card(?:{_N})|kartennummer|karten-?nr\.?|"
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+carte|(?:número[ \t_-]+de[ \t_-]+)?tarjeta|",
        r"(?:numero[ \t_-]+(?:di[ \t_-]+)?)?carta[ \t_-]+di[ \t_-]+credito",
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
# "(?-i:" or an optional part ("(?:número[ \t_-]+de[ \t_-]+)?pasaporte"), escapes such as "\\t" removed.
_SOURCE = re.sub(r"\\[A-Za-z]", " ", "|".join("|".join(f"|{x}" for x in f) for f in LABELS.values()))
# Less the words that only occur inside labels, after their first word ("número de …", "gstin").
# ("no" stays: "Nº de cuenta" is read "No de cuenta" after NFKC.)
_WORDS = [w.lower() for w in re.findall(r"(?:(?<=[|:?])|(?<=\(\?-i:))([^\W\d_]+)", _SOURCE)
          if w.lower() not in {"d", "de", "di", "du", "da", "do", "in", "u"}]
#: What a word that starts a label starts with: every label starts with a word written out in
#: LABELS, so the word itself is in the first set if it has one letter ("n" for "n°"), or its
#: first two or three letters are in the others ("sv" for "SV-Nummer", "pas" for "passport").
#: Testing a word against these sets is far cheaper than trying LABEL there, and gives a superset
#: of the places LABEL can match.
LABEL_STARTS: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
    frozenset(w for w in _WORDS if len(w) == 1),
    frozenset(w for w in _WORDS if len(w) == 2),
    frozenset(w[:3] for w in _WORDS if len(w) >= 3),
)


def may_start_label(word: str) -> bool:
    """Whether a label may start with `word` (a run of letters at a word start)."""
    word = word.lower()
    one, two, three = LABEL_STARTS
    # A one-letter word starts a label only alone ("n°", "a/c", "c.f."), never as a prefix.
    return word in one or word[:2] in two or word[:3] in three


def subkind_of(match: re.Match[str]) -> str:
    """The subkind whose label `match` (a match of LABEL) found."""
    return next(name for name, value in match.groupdict().items() if value is not None)
