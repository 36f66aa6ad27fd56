"""Secrets recognised by what surrounds them rather than by their own format.

`password=…`, `"api_key": "…"`, `client_secret: '…'`, `Authorization: Bearer …`, `--token …`,
`https://user:pass@host` and prose such as "the password is …". Only the value is redacted; the
key stays, so a stored note still says which credential it was about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import PLACEHOLDERS, Candidate
from .scan import Scan

PRIORITY = 85

# The value is matched in a lookahead, so it is not consumed: in "endpoint: https://x/?token=abc"
# the search goes on inside the value and finds "token=abc". An unquoted value ends at "&name="
# (the next query parameter) but may contain other "&" ("Tr0ub4dor&3").
_ASSIGNMENT = re.compile(
    r"""
    (?P<key>(?<![\w.-])[A-Za-z_][A-Za-z0-9_.-]*)
    (?P<keyquote>["']?)
    [ \t]*(?P<op>:=|=>|=(?!=)|:(?![:/])|\bis\b|\bwas\b)[ \t]*
    (?=(?P<value>"[^"\n]*"|'[^'\n]*'|`[^`\n]*`|(?:[^\s,;&'"`)}\]<>]|&(?!\w+=))+))
    """,
    re.VERBOSE,
)
_AUTH_HEADER = re.compile(
    r"\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:bearer|basic|token|digest|bot|apikey)[ \t]+)?(?P<value>[A-Za-z0-9._~+/=-]{8,})",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\bbearer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/?#@]*:(?P<value>[^\s/?#@]+)@", re.IGNORECASE)
_CLI_FLAG = re.compile(
    r"(?<![\w-])--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|"
    r"access-token|private-key|key)(?:=|[ \t]+)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)",
    re.IGNORECASE,
)
# `docker login -p X`, `mysql -pX`: short flags that mean "password" only for these programs.
# Prose that names what a credential is for before giving it: "wifi password for the office: …",
# "Passwort für den Testnutzer: …", "mot de passe du routeur : …", "token for the push is …".
_CREDENTIAL_FOR = re.compile(
    r"\b(?:passwords?|passwort|kennwort|passphrase|passcode|pin|token|api[ \t-]?key|secret|"
    r"mot[ \t]+de[ \t]+passe|contraseña|senha|wachtwoord)"
    r"[ \t]+(?:for|of|to|on|at|für|zum|zur|vom|von|des|du|de|del|della|per|para|voor|van)\b"
    r"[^\n:=]{1,40}?[ \t]*(?::|=|\bis\b|\bwas\b|\bist\b|\best\b|\bes\b|\bè\b|\bé\b)[ \t]*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;'\"`)}\]<>]+)",
    re.IGNORECASE,
)
_LOGIN_SHORT_FLAG = re.compile(
    r"\b(?:(?:docker|podman|nerdctl|helm)(?:[ \t]+registry)?[ \t]+login\b[^\n]*?[ \t]-p[ \t]+"
    r"|\bmysql(?:dump|admin)?\b[^\n]*?[ \t]-p)(?P<value>[^\s\"']+)"
)

# Key names are compared in snake_case: "apiKey", "API-KEY" and "api.key" all become "api_key".
_SECRET_KEY = re.compile(
    r"(?:passw(?:or)?d|passphrase|secret|token|credentials?|sessionid|cookie)(?:_|$)"
    r"|(?:^|_)(?:pwd|pw|pass|apikey|accesskey)(?:_|$)"
    r"|(?:^|_)(?:api|access|private|secret|signing|encryption|master|auth|license|client|app|account|"
    r"storage|shared_access|session)_key(?:_|$)"
)
# Keys that name something about a credential rather than the credential itself.
_NOT_A_SECRET_KEY = frozenset(
    "count max min length len size limit ttl expiry expires expiration timeout type mode name names "
    "path file url uri endpoint header field rate policy version enabled enable required prefix "
    "format hint reset strength store provider regex pattern hash hasher hashed id ids env var label "
    "placeholder algorithm algo scope scopes audience issuer validator validators lifetime age class "
    "backend manager source location dir usage budget tokens input output validation "
    "rotation rotated created updated last form forms generator generators text help fallbacks "
    "fallback mixin class view field widget serializer validator checker "
    # "Pass-Nr.", "pass_no": a passport's number (German "Pass"), not a password.
    "nr no num number nummer".split()
)
_NON_VALUES = frozenset(
    "none null nil true false undefined required optional empty redacted xxx xxxx changeme example "
    "secret password passwd pass pwd token user username yes no n/a tbd todo hidden masked".split()
)
# A group of X's or stars in a value marks a template to fill in, not a credential.
_TEMPLATE_GROUP = re.compile(r"(?:^|[-_ .:])(?:X{4,}|x{4,}|\*{4,})(?:$|[-_ .:])")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_DOTTED_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Values that are code, not credentials, after `password = ` in a program.
_CODE_WORDS = frozenset(
    "await async self cls this kwargs args value values data request response result obj instance "
    "field form none true false null nil undefined new lambda function return yield not".split()
)
_CODE_REFERENCE = re.compile(r"^(?:os\.|process\.env|env\.|ENV\b|settings\.|config\.|self\.|this\.)")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
# The pieces of a CamelCase name: "SetPassword", "HTTPBasicAuth" -> "Set", "Password"; "HTTP", …
_CAMEL_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)
# Five consonants in a row: no English or German word part has them ("Angstschweiss" aside).
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xz]{5}", re.IGNORECASE)


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for match in _ASSIGNMENT.finditer(text):
        if not _is_secret_key(match.group("key")):
            continue
        op = match.group("op")
        prose_like = op in ("is", "was") or (op == ":" and not match.group("keyquote"))
        span = _value_span(match, "value", strict=prose_like)
        if span:
            yield Candidate("secret", *span, "assignment", PRIORITY)
    for match in _CREDENTIAL_FOR.finditer(text):
        # Prose: the value must look like a credential, as after "the password is".
        span = _value_span(match, "value", strict=True)
        if span:
            yield Candidate("secret", *span, "assignment", PRIORITY)
    for pattern, rule in ((_AUTH_HEADER, "authorization_header"), (_BEARER, "bearer_token"),
                          (_URL_CREDENTIALS, "url_credentials"), (_CLI_FLAG, "cli_flag"),
                          (_LOGIN_SHORT_FLAG, "cli_flag")):
        for match in pattern.finditer(text):
            span = _value_span(match, "value", strict=False)
            if span:
                yield Candidate("secret", *span, rule, PRIORITY)


def _is_secret_key(key: str) -> bool:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).replace("-", "_").replace(".", "_").lower()
    if not _SECRET_KEY.search(snake):
        return False
    return not any(part in _NOT_A_SECRET_KEY for part in snake.split("_"))


def _value_span(match: re.Match[str], group: str, *, strict: bool) -> tuple[int, int] | None:
    """The span of the secret inside the value group, or None when the value is not a secret.

    strict: the value follows prose ("the password is …") or a YAML colon, where ordinary words
    are common; then it must be quoted or look like a credential (digits, symbols, mixed case).
    """
    value = match.group(group)
    start, end = match.span(group)
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`"
    if quoted and value[0] == "`":
        return None  # a code span: `Authorization: Bearer sam_…` in documentation
    if quoted:
        value, start, end = value[1:-1], start + 1, end - 1
    else:
        # A sentence's full stop is not part of the value; "!" often is ("hunter2!"), so it stays.
        stripped = value.rstrip(".:")
        end -= len(value) - len(stripped)
        value = stripped
    if not _is_secret_value(value, quoted=quoted):
        return None
    if strict and not quoted and not (len(value) >= 6 and _looks_like_credential(value)):
        return None
    return start, end


def _is_secret_value(value: str, *, quoted: bool) -> bool:
    if len(value) < 4 or value.lower() in _NON_VALUES:
        return False
    if any(placeholder in value for placeholder in PLACEHOLDERS.values()):
        return False
    if value.startswith(("$", "{{", "%(", "<", "#{", "@")):
        return False
    if len(set(value)) == 1:  # "********"
        return False
    if _TEMPLATE_GROUP.search(value):  # "XXXX-1234-ABCD-5678-EFGH": a documentation example
        return False
    if any(ch.isspace() for ch in value) and not _looks_like_credential(value):
        return False  # "see the docs"
    if quoted:
        # A constant's name ("_auth_user_id") or a dotted import path is not a credential.
        return not (value.startswith("_") or _DOTTED_PATH.fullmatch(value))
    if "(" in value or "[" in value or _CODE_REFERENCE.match(value) or _ENV_NAME.match(value):
        return False
    return not _is_code_identifier(value)


def _is_code_identifier(value: str) -> bool:
    """`raw_password`, `default_token_generator`, `request.user`, `SetPasswordMixin`, `await`:
    in `password = <value>` without quotes, such a value is a variable, not the password."""
    if not _IDENTIFIER.fullmatch(value) or any(ch.isdigit() for ch in value):
        return False
    camel_case = value[0].isupper() and any(ch.isupper() for ch in value[1:]) and "_" not in value
    if camel_case:
        return _is_made_of_words(value)
    return "_" in value or "." in value or value in _CODE_WORDS


def _is_made_of_words(value: str) -> bool:
    """`SetPasswordMixin`, `HTTPBasicAuth`: every piece is a pronounceable word or a short acronym.
    A random letters-only password has mixed case too (`ZhgcmMaeSIFiit`), but pieces such as
    "Zhgcm" that no language spells."""
    for piece in _CAMEL_PIECE.findall(value):
        if piece.isupper() and len(piece) <= 5:
            continue  # an acronym: HTTP, DB, URL
        if len(piece) < 2 or not _VOWEL.search(piece) or _CONSONANT_RUN.search(piece):
            return False
    return True


def _looks_like_credential(value: str) -> bool:
    has_digit = any(ch.isdigit() for ch in value)
    has_symbol = any(not ch.isalnum() and not ch.isspace() for ch in value)
    mixed_case = any(ch.isupper() for ch in value[1:]) and any(ch.islower() for ch in value)
    return has_digit or has_symbol or mixed_case
