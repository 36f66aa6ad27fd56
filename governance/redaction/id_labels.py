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
import unicodedata

# "number", "no.", "nr", "#", "ID" in the languages of the labels below. Used after a label
# that needs one, and skipped after any label.
NUMBER_WORDS = (
    r"numbers?|num\.?|no\.?|nos\.?|nr\.?|n[°º]\.?|#|id|ids|code|ref(?:erence)?|nummer|numéro|número|numero|"
    r"numer|nro\.?|núm\.?|number|n\.[°º]|n\.o\.?|n\.(?=[ \t])|numarası|numarasi|numaram|č\.|"
    r"référence|referencia|riferimento|nummern|namba|kod"
)
_N = rf"(?:[ \t_-]*(?:{NUMBER_WORDS}))"  # a number word after the label ("tax_id", "customer-no")
_SEP = r"[ \t.-]?"  # "NI number", "NI-number", "N.I. number"
# The number word as a nested key: JSON's '"customer": {"id": …', YAML's 'customer:\n  number: …',
# an INI section's '[customer]\nid = …'.
_NESTED_N = (
    r"(?:[\"'\]]?[ \t]*:?[ \t]*(?:\{[ \t]*|\r?\n[ \t]*)[\"']?(?:id|number|no\.?|nr\.?)[\"']?(?=[ \t]*[:=]))"
)
# After an acronym written in lower case ("dni", "cpf", "ein"): a colon, "#", "=", a number word
# or a digit must follow, because in lower case several are words ("sin", "nie", "ein", "pan").
_THEN_VALUE = (
    r"(?=[ \t]*[:#=]|[ \t_-]*(?:no\.?|nr\.?|number|num\.?)(?![^\W_])|[ \t]+(?:(?:is|was)[ \t]+)?\d|"
    r"[ \t]+[-–—][ \t]+(?:it['’]?s[ \t]+)?\d|[ \t]+(?:de|del|da|do|du)[ \t][^\n:\d]{0,30}:)"
)
# (Or a number of nine digits or more written in groups: "sin 259 442 176", "ein 50-6000165".)
_THEN_SIGN = (
    r"(?=[ \t]*[:#=]|[ \t_-]*(?:no\.?|nr\.?|number|num\.?)(?![^\W_])|[ \t]+(?:is|was)[ \t]+\d|"
    r"[ \t]+\(?\d{2,3}[ -]\d{3}[ -]?\d{3,7}(?!\d))"
)

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
        rf"personal[ \t_-]+(?:id(?:entification)?|identity)(?:{_N})?|personal[ \t_-]+(?:number|code|no\.?)|",
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
        r"número[ \t_-]+de[ \t_-]+identidad|(?:n[º°]?|número)[ \t_-]+de[ \t_-]+afiliaci[oó]n|",
        r"cédula(?:[ \t_-]+de[ \t_-]+(?:identidad|ciudadanía))?|cedula|(?-i:CPF|RG)|curp|",
        r"codice[ \t_-]+fiscale|c\.f\.|carta[ \t_-]+d['’]identità|"
        r"(?:numero[ \t_-]+(?:di[ \t_-]+)?)?previdenza[ \t_-]+sociale|",
        r"pesel|dowód(?:[ \t_-]+osobisty)?|"
        r"(?:seria[ \t_-]+i[ \t_-]+)?(?:numer|nr\.?)[ \t_-]+dowodu(?:[ \t_-]+osobistego)?|"
        r"dowodu[ \t_-]+osobistego|",
        r"personnummer|personnr\.?|person-?nummer|fødselsnummer|fodselsnummer|cpr(?:-?(?:nummer|nr\.?))?|",
        r"henkilötunnus|hetu|isikukood|asmens[ \t_-]+kodas|personas[ \t_-]+kods|",
        r"rodné[ \t_-]+číslo|rodne[ \t_-]+cislo|",
        r"(?-i:EGN|CNP|OIB)|emšo|emso|amka|tc[ \t_-]+kimlik(?:[ \t_-]+(?:no|numarası))?|"
        r"kimlik(?:[ \t_-]+no)?|",
        r"aadhaar(?:[ \t_-]+(?:number|no\.?|card))?|nric|hkid|mykad|teudat[ \t_-]+zehut|",
        rf"medicare(?:{_N})?|nhs(?:{_N})|health[ \t_-]+(?:insurance|card)(?:{_N})|",
        rf"kranken-?versicher(?:ten|ungs)-?(?:nummer|nr\.?)|(?-i:PPSN?)(?:{_N})?|(?-i:RRN)|"
        rf"resident[ \t_-]+registration(?:{_N})?|",
        r"(?:מספר[ \t_-]+)?(?:תעודת[ \t_-]+זהות|זהות)|ת\.ז\.?|(?-i:My[ \t]?Number)|kennitala[n]?|(?-i:SNILS)|"
        r"(?-i:NAS)(?=[ \t]*[:.]?[ \t]*(?:(?:le|la)[ \t]+voici[ \t]*:?[ \t]*)?\d{3}[ ]?\d{3}[ ]?\d{3})|"
        r"id-?nommer|серия[ \t]+и[ \t]+номер|(?:číslo|cislo)[ \t_-]+dokladu|"
        r"снилс|"
        rf"(?-i:NIK|KTP|CNIC|NIN)|sa[ \t_-]+id(?:{_N})?|id[ \t_-]+nummer|legitimatie|",
        rf"(?:dni|cpf|nir|cnp|egn|oib|nik|ktp|cnic|snils|rrn|ppsn|nino|curp|nric|hkid){_THEN_VALUE}|",
        rf"(?:sin|nie|rg|nin|cni|taj){_THEN_SIGN}|",
        rf"soc\.?[ \t_-]*sec(?:urity)?\.?(?:{_N})?|ss[ \t]*(?:#|no\.?)|",
        r"(?:dl|d/l)(?:[ \t]*#|[ \t_-]+(?:no\.?|nr\.?|number|num\.?))|licen[cs]e[ \t_-]+(?:no\.?|number)|",
        r"(?:número[ \t_-]+de[ \t_-]+)?seguridad[ \t_-]+social|(?-i:NSS|NUSS|NISS|INSZ|JMBG|EMBG|DUI|INE)|",
        r"carnet[ \t_-]+de[ \t_-]+identidad|"
        r"(?:número[ \t_-]+de[ \t_-]+|nro\.?[ \t_-]+(?:de[ \t_-]+)?)documento|",
        r"documento[ \t_-]+de[ \t_-]+identificaci[oó]n|identificaci[oó]n[ \t_-]+(?:nacional|personal)|",
        r"tessera[ \t_-]+sanitaria|identiteitskaart|identiteitsbewijs|id-?kaart|",
        r"občansk[ýého]+[ \t_-]+průkaz[u]?|číslo[ \t_-]+op|személyi[ \t_-]+szám|személyazonosító|",
        r"αριθμός[ \t_-]+ταυτότητας|ταυτότητα|αμκα|(?-i:ΑΔΤ)|ЕГН|ЈМБГ|ЕМБГ|(?-i:ПИНФЛ|ЖШШИР|ПИН)|",
        r"(?-i:NIDA|QID|NINs|NICs|CNICs|SSNs)|(?-i:NIC)(?=[ \t]*[:#])|indangamuntu|"
        r"fayda(?:[ \t_-]+(?:fan|fin|id))?|nr\.?[ \t_-]+personal|"
        r"नागरिकता(?:[ \t_-]+(?:नं\.?|नम्बर|प्रमाणपत्र[ \t_-]+नं\.?))?|",
        r"thẻ[ \t_-]+căn[ \t_-]+cước|căn[ \t_-]+cước(?:[ \t_-]+công[ \t_-]+dân)?|(?-i:CCCD|CMND)|",
        r"iqama|الرقم[ \t_-]+(?:القومي|الوطني|المدني)|إقامة|आधार(?:[ \t_-]+संख्या)?|",
        rf"national[ \t_-]+registration(?:{_N})?|(?-i:BVN|TCKN)|",
        rf"philsys(?:{_N})?|(?-i:PSN|SSS|GSIS|UMID)(?:{_N})?|ghana[ \t_-]+card(?:{_N})?|omang|"
        r"کد[ \t_-]+ملی|شماره[ \t_-]+ملی|شناختی[ \t_-]+کارڈ|kitambulisho|(?-i:FİN|ЖСН)|პირადი[ \t_-]+ნომერი|"
        r"(?-i:C[I])(?=[ \t]*:?[ \t]*\d{6,8}(?![\d#-]))|(?:n[°º]|número)[ \t_-]+de[ \t_-]+(?:[c]i|c\.i\.)|",
        r"(?:unique[ \t_-]+)?identification[ \t_-]+(?:number|no\.?)|id[ \t_-]*#|",
        r"(?-i:NI)(?=[ \t]*[:#])|s\.s\.n\.?|s\.i\.n\.(?=[ \t]*[:#(]|[ \t]+\d)|"
        r"d\.n\.i\.?|c\.p\.f\.?|n\.i\.e\.?|n\.i\.n\.?(?=[ \t]*[:#])|",
        r"cart[ãa]o[ \t_-]+(?:de[ \t_-]+)?cidad[ãa]o|bilhete[ \t_-]+de[ \t_-]+identidade|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+sécu|"
        r"(?:south[ \t_-]+african|sa)[ \t_-]+id(?:entity)?(?:[ \t_-]+number)?",
    ),
    "passport": (
        rf"passport(?:{_N})?|passports|pass\.?-?nr\.?|pass-?nummer|passnummer|reisepass(?:nummer|-?nr\.?)?|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+(?:de[ \t_-]+|du[ \t_-]+)?passeport|passeport|",
        r"(?-i:Pass)(?=[ \t_-]+[A-Z]{0,2}\d)|pass(?=[ \t]+[A-Z]{1,2}\d{6,8}(?![\w-]))|"
        r"(?:número[ \t_-]+de[ \t_-]+)?pasaporte|"
        r"(?:numero[ \t_-]+(?:di|del)[ \t_-]+)?passaporto|passaporte|",
        r"paspoort-?nommer|passin[ \t_-]+numero(?:a|n)?|pass-?nummere?|pass\.[ \t]*(?:no\.?|nr\.?)|"
        r"заграничн(?:ый|ого)(?:[ \t_-]+паспорта?)?|"
        r"(?:numer[ \t_-]+)?paszport(?:u)?|paspoort(?:nummer)?|passi|pasaport|(?:номер[ \t_-]+)?паспорта?|"
        r"διαβατήριο|διαβατηρίου|דרכון|جواز[ \t_-]+السفر|(?:شماره[ \t_-]+)?(?:گذرنامه|پاسپورت)|"
        r"পাসপোর্ট(?:[ \t_-]+নম্বর)?|paspor|pasport|pașaport|pas[ \t_-]*(?:nr\.?|nummer|no\.?)|passinumero|"
        r"passinummer|(?:رقم[ \t_-]+)?الجواز|cestovný[ \t_-]+pas|potni[ \t_-]+list|"
        r"broj[ \t_-]+(?:putovnice|pasoša)|"
        r"paso[ \t_-]+numeris|pases[ \t_-]+numurs|passi[ \t_-]+number|vegabréf|passaport|پاسپورٹ|pasipoti|"
        r"პასპორტი|անձնագիր|пасош|пашпарт|fasfo|pasbort|પાસપોર્ટ|ਪਾਸਪੋਰਟ|పాస్‌పోర్ట్|கடவுச்சீட்டு|ፓስፖርት|",
        rf"travel[ \t_-]+document(?:{_N})?|pase(?=[ \t]*(?:nr\.?|numurs|:))|",
        r"pass[ \t]+(?:nr\.?|no\.?|number)|загран(?:ичного[ \t_-]+)?паспорта?|",
        r"ppt(?:[ \t]*#|[ \t_-]+(?:no\.?|nr\.?|number|num\.?))|"
        r"ppt(?=[ \t]+[A-Z]{1,2}\d{6,8}(?![\w-]))|pp[ \t]*(?:#|no\.?|nr\.?|number)|",
        r"cestovní[ \t_-]+pas|číslo[ \t_-]+pasu|útlevél(?:szám(?:om|od|a|unk|uk)?)?|pasaportë|pasoš|"
        r"putovnica|"
        r"paşaport|hộ[ \t_-]+chiếu|หนังสือเดินทาง|पासपोर्ट|جواز(?:[ \t_-]+سفر)?|護照",
    ),
    "iban": (
        r"iban(?:-?(?:nummer|nr\.?|number|no\.?|code))?",
    ),
    "tax_number": (
        rf"tax[ \t_-]+(?:id(?:entification)?|identifier|file|registration|reference|payer)(?:{_N})?|",
        rf"tax(?![ \t_-]*code)(?:{_N}|{_NESTED_N})|taxpayer(?:[ \t_-]+id(?:entification)?)?(?:{_N})?|"
        rf"(?-i:TIN|TFN|UTR|EIN|ITIN)|",
        r"unique[ \t_-]+taxpayer[ \t_-]+reference|employer[ \t_-]+identification(?:[ \t_-]+number)?|",
        rf"vat(?:[ \t_-]+(?:id|reg(?:istration)?))?(?:{_N})?|",
        r"ust\.?-?id(?:nr\.?)?|ust-?idnr\.?|umsatzsteuer-?(?:identifikations)?(?:nummer|-?id)|",
        r"steuer-?(?:nummer|nr\.?|id|identifikationsnummer)|steueridentifikationsnummer|idnr\.?|",
        r"steuerliche[ \t_-]+identifikationsnummer|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+(?:d['’]identification[ \t_-]+)?fiscale?|"
        r"(?:numer[ \t_-]+)?identyfikacji[ \t_-]+podatkowej|daňové[ \t_-]+identifikační[ \t_-]+číslo|"
        r"identificador[ \t_-]+fiscal|numéro[ \t_-]+de[ \t_-]+tva|"
        r"n[°º][ \t_-]+(?:de[ \t_-]+)?tva|tva(?:[ \t_-]+intracommunautaire)?|(?-i:SPI)|siren|siret|",
        r"(?-i:NIF|CIF|CUIT|CUIL|RUT|RUC|NIT)|identificación[ \t_-]+fiscal|número[ \t_-]+fiscal|",
        r"número[ \t_-]+de[ \t_-]+contribuinte|contribuinte|"
        r"inscri[çc][ãa]o[ \t_-]+(?:[e]stadual|[m]unicipal)|",
        r"(?-i:ICE)(?=[ \t]*[:#]|[ \t]+\d{15}(?!\d))|"
        r"identifiant[ \t_-]+commun[ \t_-]+de[ \t_-]+l['’]entreprise|",
        r"tax[ \t_-]+code|organisasjonsnummer|ondernemingsnummer|"
        r"(?-i:ІПН|ЄДРПОУ|РНОКПП|VKN|NZBN|FEIN|NIPT|CUI|EIK|RNC)|"
        r"davčna[ \t_-]+številka|(?-i:ПИБ|KMKR|VÖEN|ՀՎՀՀ)|pvm[ \t_-]+(?:mokėtojo[ \t_-]+)?kodas|e-?tin|"
        r"(?:no\.?[ \t_-]+)?cukai[ \t_-]+pendapatan|(?-i:RTN|TINs|EINs)|"
        r"(?-i:BIR)[ \t_-]+(?:file|tin)(?:[ \t_-]*(?:no\.?|number|#))?|pvn[ \t_-]+numurs|registrikood|"
        r"کد[ \t_-]+اقتصادی|شناسه[ \t_-]+ملی|namba[ \t_-]+ya[ \t_-]+mlipa[ \t_-]+kodi|"
        r"іпн|єдрпоу|булстат|cod[ \t_-]+fiscal|(?-i:B[N])(?=[ \t:#]*\d{9})|"
        r"(?:número[ \t_-]+de[ \t_-]+)?identifica[çc][ãa]o[ \t_-]+fiscal|"
        r"(?:employer[ \t_-]+)?paye[ \t_-]+ref(?:erence)?|hmrc[ \t_-]+ref(?:erence)?|"
        r"compan(?:y|ies)[ \t_-]+(?:reg(?:istration)?\.?[ \t_-]+)?(?:number|no\.?|nr\.?)|",
        rf"business(?:[ \t_-]+(?:number|no\.?|registration(?:{_N})?))|(?-i:RFC)|(?-i:CNPJ)|cnpj|"
        rf"kvk(?:-?nummer)?|"
        rf"(?-i:CVR)(?:-?(?:nr\.?|nummer))?|cvr-?(?:nr\.?|nummer)|(?-i:SE)-?(?:nr\.?|nummer)|",
        r"partita[ \t_-]+iva|p\.[ \t]?iva|",
        r"(?-i:NIP)|regon|btw(?:-?(?:nummer|nr\.?|id))?|fiscaal[ \t_-]+nummer|rsin|",
        r"organisationsnummer|org\.?[ \t]?nr\.?|(?-i:ΑΦΜ|ИНН)|vergi(?:[ \t_-]+(?:kimlik|numarası|no))+|"
        r"momsnummer|moms(?:-?nr\.?)|skattenummer|skatteregistreringsnummer|y-tunnus|alv-?numero|",
        rf"gst(?:in)?(?:{_N})?|(?-i:ABN|ACN|IRD|NPWP|INN)(?:{_N})?|(?-i:PAN)(?:[ \t_-]+card)?(?:{_N})?|",
        rf"(?:itin|utr|tfn|cuit|cuil|nif|cif|ruc|abn|acn|ird|npwp|nipc|nuit|ntn){_THEN_VALUE}|",
        rf"(?:ein|tin|pan|rut|nit|inn|rfc){_THEN_SIGN}|rfc(?=[ \t]+[A-Za-z&Ññ]{{3,4}}\d{{6}})|"
        rf"nip{_THEN_VALUE}|",
        r"st\.?-?nr\.?|(?-i:UID)(?:-?(?:nummer|nr\.?))?|"
        r"mwst-?(?:nr\.?|nummer)|(?-i:MST)|mã[ \t_-]+số[ \t_-]+thuế|",
        r"(?-i:DIČ|IČO|IČ[ \t]DPH|DIC|ICO)|adószám(?:om|od|a|unk|uk)?|"
        r"adóazonosító[ \t_-]+szám|(?-i:PIB|KPP|OGRN|TRN|ИИН|БИН|ЕИК)|",
        r"инн|αφμ|(?:número[ \t_-]+de[ \t_-]+)?(?:identificación[ \t_-]+)?tributari[oa]|"
        r"(?:numero[ \t_-]+di[ \t_-]+)?partita[ \t_-]+iva|",
        r"vergi[ \t_-]+no|tax[ \t_-]+(?:no\.?|nr\.?|#|ref)|tax[ \t_-]+file|kra[ \t_-]+pin|",
        r"الرقم[ \t_-]+الضريب[يى]|رقم[ \t_-]+التسجيل[ \t_-]+الضريب[يى]|البطاقة[ \t_-]+الضريبية|",
        r"n\.i\.f\.?|c\.u\.i\.t\.?|r\.u\.t\.?|r\.f\.c\.?(?=[ \t]*[:#])|e\.i\.n\.?|t\.i\.n\.?(?=[ \t]*[:#])",
    ),
    "customer_number": (
        rf"customer(?:{_N}|{_NESTED_N})|(?:custmer|costumer|cutomer|custumer)(?:{_N})|client(?:{_N}|"
        rf"{_NESTED_N})|"
        rf"member(?:ship)?(?:{_N}|{_NESTED_N})|subscriber(?:{_N})|",
        rf"polic(?:y|ies)(?:{_N}|{_NESTED_N})|insurance(?:{_N})|contract(?:{_N})|patient(?:{_N})|",
        r"patienten-?(?:nummer|nr\.?|id)|",
        r"servicekarte(?:n-?nummer)?|miles[ \t]*&[ \t]*more(?:[ \t_-]+(?:number|no\.?|card))?|"
        r"bahncard(?:-?nummer)?|"
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
        r"(?:numer|nr\.?)[ \t_-]+(?:klienta|umowy|polisy|członkowski)|kund-?nummer|kunde-?nummer|"
        r"avtalsnummer|"
        r"asiakasnumero|",
        r"cust\.?(?:[ \t]*#|[ \t_-]+(?:no\.?|nr\.?|number|num\.?|id|ref))|cust(?:omer)?[ \t_-]*(?:ref|acct)|",
        r"mbr(?:[ \t]*#|[ \t_-]+(?:no\.?|number|id))|pol\.?(?:[ \t]*#|[ \t_-]+(?:no\.?|nr\.?|number))|",
        r"client[ \t_-]+(?:ref|reference|code)|ref\.?[ \t_-]+(?:cliente|client)|"
        r"polic[ye](?=[ \t]*[:#]?[ \t]*(?:[A-Z]{1,3}-?)?\d(?:[- ]?\d){5})|police[ \t_-]*(?:nr\.?|nummer)|"
        r"vertrag(?=[ \t:#]+\d{6})|kd\.?-?nr\.?|vers\.?-?nr\.?|(?-i:VSNR)|relatienummer|",
        r"(?:código|cod\.?|n[º°])[ \t_-]+(?:d[eoa][ \t_-]+)?cliente|"
        r"číslo[ \t_-]+zákazníka|zákaznické[ \t_-]+číslo|ügyfél(?:szám(?:om|od|a|unk|uk)?|azonosító)|"
        r"номер[ \t_-]+договора|"
        r"müşteri[ \t_-]+(?:numaras[ıi]|numaram|no)|номер[ \t_-]+клиента|mã[ \t_-]+khách[ \t_-]+hàng|"
        r"رقم[ \t_-]+(?:العميل|المشترك|الاشتراك)|מספר[ \t_-]+לקוח|(?:αριθμός|κωδικός)[ \t_-]+πελάτη|"
        r"номер[ \t_-]+(?:клієнта|абонента|договору)|(?:id|no\.?|nomor)[ \t_-]+pelanggan|pelanggan|"
        r"(?:número|n[º°.]?|no\.?)[ \t_-]+de[ \t_-]+servicio|(?-i:C[A])[ \t_-]*(?:number|no\.?)|",
        r"skymiles|aadvantage|mileageplus|flying[ \t_-]+blue|krisflyer|skywards|executive[ \t_-]+club|"
        r"privilege[ \t_-]+club(?:[ \t_-]+membership)?|al[ \t_-]+fursan(?:[ \t_-]+(?:no\.?|number))?|"
        r"smart[ \t_-]?card[ \t_-]+(?:number|no\.?)|philhealth(?:[ \t_-]+(?:id|no\.?|number))?|"
        r"(?:no\.?[ \t_-]+)?kartu(?:[ \t_-]+bpjs)?|nombor[ \t_-]+ahli(?:[ \t_-]+kwsp)?|"
        r"(?-i:NIS)[ \t_-]+(?:number|no\.?)|contrato[ \t_-]+n[º°]\.?|kliendikood|"
        r"ff[ \t]*(?:#|no\.?|number)|",
        rf"consumer(?:{_N})|(?-i:MRN)|mrn{_THEN_SIGN}|medical[ \t_-]+record(?:{_N})?|"
        r"(?:hasta[ \t_-]+)?protokol[ \t_-]+(?:no|numarası)|",
        r"(?-i:MPRN|GPRN|MPAN|ICP)|mprn|gprn|mpan|meter[ \t_-]+point(?:[ \t_-]+(?:reference|number|no\.?))?|",
        r"abonnent-?nummer|abonnements?nummer|abonnementsnr\.?|kundenr\.?|",
        r"(?:(?:numéro|n[°º]|no\.?)[ \t_-]+)?(?:d['’])?[a]llocataire|(?-i:CRN)|",
        r"vertragskonto(?:nummer|-?nr\.?)|zähler(?:nummer|-?nr\.?)|"
        r"(?:(?:numéro|n[°º]|no\.?)[ \t_-]+)?(?-i:PDL|PRM)(?=[ \t:#]*\d{14}(?!\d))|"
        r"(?:codice[ \t_-]+)?pod(?=[ \t:#]*IT\d{3}E)|"
        r"(?-i:CUPS)(?=[ \t:#]*ES\d{4})|(?:numer|nr\.?|kod)[ \t_-]+ppe|"
        r"numero[ \t_-]+utente|"
        r"zákaznícke[ \t_-]+číslo|številka[ \t_-]+stranke|broj[ \t_-]+(?:korisnika|kupca)|"
        r"број[ \t_-]+корисника|"
        r"kliento[ \t_-]+numeris|klienta[ \t_-]+numurs|kliendinumber|viðskiptavinanúmer|"
        r"número[ \t_-]+de[ \t_-]+client|клиентски[ \t_-]+номер|namba[ \t_-]+ya[ \t_-]+mteja|"
        r"nombor[ \t_-]+pelanggan|کسٹمر[ \t_-]+نمبر|شماره[ \t_-]+مشتری|"
        r"medlemsnummer|medlemsnr\.?|(?:număr|cod)[ \t_-]+client|αριθμός[ \t_-]+συμβολαίου|"
        r"номер[ \t_-]+полиса|"
        r"abone[ \t_-]+(?:no|numarası|numaram)|sözleşme[ \t_-]+(?:hesap[ \t_-]+)?(?:no|numarası)|"
        r"(?:no\.?|nomor)[ \t_-]+polis|clubcard|aeroplan|avios(?:[ \t_-]+(?:number|no\.?))?|nectar|"
        r"advantage[ \t_-]+card|",
        r"online[ \t_-]*banking[ \t_-]+(?:id|[u]ser[ \t_-]*id|[l]ogin(?:[ \t_-]+id)?)|",
        r"ग्राहक[ \t_-]+(?:संख्या|नंबर|क्रमांक)|उपभोक्ता[ \t_-]+(?:संख्या|नंबर)|",
        r"(?<!test[ \t])card(?=[ \t:#]+\d{4}[ -]?\d{4}[ -]?\d{4})",
    ),
    "account_number": (
        rf"(?:bank[ \t_-]+)?account(?:{_N})?|acct(?:{_N})?|a/c(?:{_N})?|",
        rf"(?:checking|savings|current|bank|deposit)[ \t_-]+account|accounts(?=[ \t]*:)|"
        rf"bank[ \t_-]+(?:details|account)(?:{_N})?|",
        r"savings|checking|",
        r"konto-?(?:nummer|nr\.?)|kontonr\.?|kontonummer|bankkonto|"
        r"(?:giro|spar|tagesgeld|kunden|geschäfts|gehalts|depot)?konto|"
        r"depot-?(?:nummer|nr\.?)|",
        rf"(?:loan|mortgage)(?:{_N})|",
        r"(?:número[ \t_-]+da[ \t_-]+)?conta(?:[ \t_-]+(?:corrente|bancária|poupança))?|",
        r"(?:номер[ \t_-]+)?(?:лицевого[ \t_-]+)?сч[её]та|hesap(?:[ \t_-]+(?:no|numarası))?|",
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+compte|compte[ \t_-]+(?:bancaire|n[°º])|(?-i:RIB)|compte|",
        rf"(?:número|n[º°.]?|no\.?)[ \t_-]+de[ \t_-]+cuenta|cuenta(?:[ \t_-]+bancaria)?|clabe|(?-i:CBU)|"
        rf"cbu{_THEN_VALUE}|",
        r"(?:numero|n\.)[ \t_-]+(?:di[ \t_-]+)?conto(?:[ \t_-]+corrente)?|conto[ \t_-]+corrente|",
        r"rekening-?(?:nummer|nr\.?)|rekeningnummer|",
        r"numer[ \t_-]+(?:konta|rachunku)|rachunek(?:[ \t_-]+bankowy)?|",
        r"tilinumero|",
        rf"(?:credit|debit|bank)[ \t_-]+card(?:{_N})?|card(?:{_N})|kartennummer|karten-?nr\.?|"
        r"(?:numéro|n[°º]|no\.?)[ \t_-]+de[ \t_-]+carte|(?:número[ \t_-]+de[ \t_-]+)?tarjeta|",
        r"(?:numero[ \t_-]+(?:di[ \t_-]+)?)?carta[ \t_-]+di[ \t_-]+credito|",
        rf"acc(?:t|nt)?\.?(?:[ \t]*#|[ \t_-]*(?:no\.?|nr\.?|number|num\.?))|accnt|acc{_THEN_VALUE}|",
        rf"acc\.(?=[ \t]*\d)|a[c][ \t]*(?:no\.?|#)|(?:acount|accout|acont|accont)(?:{_N})|",
        r"(?-i:TRR)|arveldusarve|kontonumber|reikningsnúmer|número[ \t_-]+de[ \t_-]+compte|"
        r"банкова[ \t_-]+сметка|сметка|број[ \t_-]+рачуна|текући[ \t_-]+рачун|شماره[ \t_-]+حساب|"
        r"اکاؤنٹ[ \t_-]+نمبر|namba[ \t_-]+ya[ \t_-]+akaunti|akaunti|numero[ \t_-]+ng[ \t_-]+account|"
        r"nombor[ \t_-]+akaun|ანგარიში|հաշվեհամար|hesab[ \t_-]+nömrəsi|"
        r"tili(?:nro|numero)?|cont[ \t_-]*(?:nr\.?|numărul)|numărul[ \t_-]+contului|"
        r"contul(?:[ \t_-]+bancar)?|"
        r"(?:žiro[ \t_-]+|tekući[ \t_-]+)?račun|bankverbindung|bankrekening(?:nummer)?|",
        r"kto\.?-?(?:nr\.?|nummer)|kto\.|nr\.?[ \t_-]+(?:konta|rachunku)|"
        r"číslo[ \t_-]+(?:bankovního[ \t_-]+)?účtu|č\.[ \t]?ú\.|cislo[ \t_-]+uctu|",
        r"(?:bank)?számlaszám(?:om|od|a|unk|uk)?|р/с|л/с|расч[её]тный[ \t_-]+сч[её]т|сч[её]т|"
        r"(?:номер[ \t_-]+)?рахунку|рахунок|",
        r"rek\.?[ \t-]*nr\.?|(?:no\.?|nomor)[ \t_-]+rekening|rekening|rek\.?|nuban|(?-i:NEFT|IMPS|RTGS)|"
        r"(?:no\.?[ \t_-]+)?akaun|"
        r"số[ \t_-]+tài[ \t_-]+khoản|(?-i:STK)|số[ \t_-]+tk|(?-i:CCI)|účet|",
        r"αριθμός[ \t_-]+λογαριασμού|λογαριασμός|מספר[ \t_-]+חשבון|חשבון|खाता[ \t_-]+संख्या|",
        r"bankgiro|plusgiro|postgiro|kontonr\.?|tilinro|arvelduskonto|sąskaitos[ \t_-]+numeris|"
        r"konta[ \t_-]+numurs|broj[ \t_-]+računa|številka[ \t_-]+računa|"
        r"(?:număr[ \t_-]+de[ \t_-]+)?cont[ \t_-]+bancar|"
        r"c/c|cta\.?[ \t_-]*(?:cte\.?|corriente)?|c\.c\.|conto(?:[ \t_-]+(?:n\.|nr\.?|numero))?",
    ),
    # A bank routing code (US ABA routing number, UK sort code, Australian BSB, Canadian transit
    # and institution numbers): with an account it locates a person's account, so next to one it
    # is redacted as part of it (see labelled_ids); so are the numeric bank and branch codes written
    # the same way (BLZ, clearing and registration numbers, agência, branch code). An IFSC, letters
    # and digits that name a branch in a public directory, is left alone.
    "routing_code": (
        rf"routing(?:[ \t_-]+(?:transit))?(?:{_N})?|"
        rf"(?-i:ABA|RTN)(?:{_N})?|aba[ \t_-]+(?:routing|number|no\.?)|aba{_THEN_VALUE}|",
        rf"sort[ \t_-]*code|sort(?=[ \t:]+\d{{2}}-?\d{{2}}-?\d{{2}}(?!\d))|"
        rf"s/c|(?-i:BSB)(?:{_N})?|bsb{_THEN_VALUE}|",
        r"transit(?:[ \t_-]+(?:number|no\.?|#))?|institution(?:[ \t_-]+(?:number|no\.?|#|code))?|",
        rf"(?-i:BLZ|БИК|BIK)|бик|blz{_THEN_VALUE}|bankleitzahl|clearing-?(?:nummer|nr\.?|number|no\.?)|"
        r"clearingnummer|"
        r"reg\.?[ \t_-]*nr\.?|",
        r"agência|ag\.|sucursal|סניף|branch[ \t_-]+(?:code|number|no\.?)|"
        r"(?-i:ABI|CAB)(?=[ \t:#]*\d{5}(?!\d))",
    ),
}

# The recognizers read NFKC-normalised text (normalise.py), so the labels are normalised too:
# Thai "ำ" reads "ํา", "º" reads "o".
_ALTERNATIVES = unicodedata.normalize("NFKC", "|".join(
    rf"(?P<{subkind}>{''.join(fragments)})" for subkind, fragments in LABELS.items()
))
# Labels in scripts without spaces between words: no word boundary around them ("私の旅券番号").
CJK_LABELS: dict[str, str] = {
    "national_id": (
        r"マイナンバー|個人番号|身份证(?:号码|号)?|居民身份证|주민등록번호|외국인등록번호|"
        r"เลขประจำตัวประชาชน|เลขบัตรประชาชน|บัตรประชาชน"
    ),
    "passport": (
        r"旅券番号|パスポート番号|パスポート|护照号码|护照号|护照|護照號碼|여권번호|여권|หนังสือเดินทาง(?:เลขที่)?"
    ),
    "tax_number": (
        r"法人番号|税号|纳税人识别号|统一社会信用代码|統一編號|统一编号|사업자등록번호|사업자번호|"
        r"(?:適格請求書発行)?事業者登録番号|インボイス(?:登録)?番号|เลขประจำตัวผู้เสียภาษี"
    ),
    "customer_number": (
        r"会員番号|顧客番号|お客様番号|契約番号|证券号|保单号|客户号|客户编号|会员号|고객번호|회원번호|계약번호|"
        r"หมายเลขลูกค้า|รหัสลูกค้า|契約者番号|お客さま番号|用户编号|客戶編號|会员编号|會員編號"
    ),
    "routing_code": r"支店番号|支店コード|店番",
    "account_number": (
        r"口座番号|账号|帐号|银行账号|账户号码|银行卡号|卡号|帳號|계좌번호|계좌|普通預金|当座預金|普通|当座|เลขที่บัญชี|เลขบัญชี"
    ),
}
CJK_LABEL = re.compile(
    unicodedata.normalize("NFKC", "|".join(rf"(?P<{k}>{v})" for k, v in CJK_LABELS.items()))
)

# (In LABELS, a letter written as a class, "[u]ser", "[a]llocataire", keeps a word that only
# occurs inside a longer label out of LABEL_STARTS below, so words such as "user…" or "all…" are
# not tried as label starts.)

#: A label at a word start; group names say the subkind. Longer spellings come first within a
#: subkind, and regex alternation takes the first that matches, so e.g. "passport number" is read
#: whole. An underscore may join it to other words, as in keys ("customer_number", "iban_de").
LABEL = re.compile(rf"(?<![^\W_])(?<![/\-–])(?:{_ALTERNATIVES})(?![^\W_]|[–])", re.IGNORECASE)


# The words that can start an alternative of LABELS: at a fragment's start or after "|", "(?:",
# "(?-i:" or an optional part ("(?:número[ \t_-]+de[ \t_-]+)?pasaporte"), escapes such as "\\t" removed.
_SOURCE = re.sub(r"\\[A-Za-z]", " ", "|".join("|".join(f"|{x}" for x in f) for f in LABELS.values()))
# Less the words that only occur inside labels, after their first word ("número de …", "gstin").
# ("no" stays: "Nº de cuenta" is read "No de cuenta" after NFKC.)
_WORDS = [w.lower() for w in re.findall(r"(?:(?<=[|:?])|(?<=\(\?-i:))([^\W\d_]+)", _SOURCE)
          if w.lower() not in {"d", "de", "di", "du", "da", "do", "in", "u"}]
# Two-letter labels that begin many everyday words ("ca…", "ci…", "ac…"): written with a class in
# LABELS ("C[A]"), so they stay out of the two-letter set, and tried only as whole words.
_WHOLE_WORD_STARTS = frozenset({"ca", "ci", "ac", "bn"})
#: What a word that starts a label starts with: every label starts with a word written out in
#: LABELS, so the word itself is in the first set if it has one letter ("n" for "n°") or is one of
#: _WHOLE_WORD_STARTS, or its first two or three letters are in the others ("sv" for "SV-Nummer",
#: "pas" for "passport"). Testing a word against these sets is far cheaper than trying LABEL there,
#: and gives a superset of the places LABEL can match.
LABEL_STARTS: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
    frozenset(w for w in _WORDS if len(w) == 1) | _WHOLE_WORD_STARTS,
    frozenset(w for w in _WORDS if len(w) == 2),
    frozenset(w[:3] for w in _WORDS if len(w) >= 3),
)


def may_start_label(word: str) -> bool:
    """Whether a label may start with `word` (a run of letters at a word start)."""
    word = word.lower()
    one, two, three = LABEL_STARTS
    # A one-letter word starts a label only alone ("n°", "a/c", "c.f."), never as a prefix; so do
    # the two-letter acronyms of _WHOLE_WORD_STARTS.
    return word in one or word[:2] in two or word[:3] in three


def subkind_of(match: re.Match[str]) -> str:
    """The subkind whose label `match` (a match of LABEL) found."""
    return next(name for name, value in match.groupdict().items() if value is not None)
