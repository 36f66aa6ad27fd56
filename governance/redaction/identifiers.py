"""Account ids and usernames: @mentions, "username: x", "user id 12345", "account #1234-5678",
Slack member ids, AWS account ids in ARNs and in context, customer ids such as cus_XXXX, and
usernames in prose ("my username on staging is theamara6904", "assign the ticket to amara7305").

Numbers and handles are everywhere in technical notes (issue numbers, ports, decorators, npm
scopes), so every rule needs a cue: an "@" in a mention position, a word such as "account" or
"username" right before the value, or a vendor's id format.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import isin

from . import name_lexicon as lexicon
from .findings import Candidate
from .labelled_ids import QUANTITY_AFTER
from .scan import Scan

PRIORITY_FORMAT = 75
PRIORITY_CUE = 70
PRIORITY_MENTION = 65

_MENTION = re.compile(
    r"(?<![\w@./:+\]-])@(?P<handle>[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9_])?)(?!\.?[\w@/(-])"
)
# Decorators, annotations, CSS at-rules, doc tags and broadcast mentions share the @word shape.
_AT_WORDS = frozenset(
    """
    property cached_property staticmethod classmethod abstractmethod dataclass override overload final
    contextmanager asynccontextmanager lru_cache cache wraps receiver login_required permission_required
    csrf_exempt require_post require_get require_http_methods api_view action extend_schema
    shared_task task periodic_task fixture parametrize pytest app router bp blueprint click typer
    deprecated component injectable input output ngmodule hostlistener viewchild directive pipe
    entity column table id test before after beforeeach aftereach autowired service repository bean
    configuration controller restcontroller getmapping postmapping requestmapping transactional value
    media import keyframes font-face supports layer apply tailwind use forward mixin include extend
    each if else for function return returns param params type typedef throws see since example
    author todo note everyone here channel all latest next types angular babel vue react nestjs
    testing-library admin functools classproperty register display receiver websocket sync_to_async
    """.split()
)
# "<@U024BE7LH|name>" in Slack's raw format, or a bare id with a digit after the U/W (or three digits).
_SLACK_ID = re.compile(
    r"<@(?P<id>[UW][A-Z0-9]{8,11})(?:\|[^>\n]*)?>|\b(?P<bare>[UW](?=\d|(?:[A-Z]*\d){3})[A-Z0-9]{8,11})\b"
)
_VENDOR_ID = re.compile(r"\b(?:cus|cust|acct|usr)_[A-Za-z0-9]{2,}\b")
_ARN_ACCOUNT = re.compile(r"\barn:aws[\w-]*:[\w-]*:[\w-]*:(?P<id>\d{12}):")
_DISCORD_TAG = re.compile(r"(?i:discord)[^\n]{0,30}?(?<![\w/])(?P<id>[\w.]{2,32}#\d{4})\b")

# Cues that introduce a username (the value may be letters only) ...
_USERNAME_CUES = (
    r"user[ _-]?name|user|login|handle|nickname|screen[ _-]?name|benutzername|benutzer|utilisateur|"
    r"usuario|nom d'utilisateur|github[ \t]+user(?:name)?|gitlab[ \t]+user(?:name)?|slack[ \t]+user"
)
# ... and cues that introduce a number-like account id (the value must contain digits).
_NUMBER_CUES = (
    r"(?:[a-z]+[_-])?(?:user|login|account|acct|customer|cust|member|subscriber|employee|staff|patient|"
    r"player|student)[ _-]?(?:id|no|nr|num|number|#)|uid|mrn|account|acct|customer|subscriber|member|"
    r"kundennummer|kunden-?nr\.?|kontonummer|numéro[ \t]+client|n°[ \t]+client|numéro[ \t]+de[ \t]+compte|"
    r"número[ \t]+de[ \t]+cliente|slack[ \t]+member|"
    # Member, customer and card numbers in the languages of the corpus: "Mitgliedsnummer",
    # "N° d'adhérent", "Número de socio", "Codice cliente", "Klantnummer", "Numer klienta".
    r"mitglieds-?(?:nummer|nr\.?)|versichertennummer|(?:numéro|n°)[ \t]+d['’]adhérent|"
    r"(?:número|n[º°.]?)[ \t]+de[ \t]+(?:socio|cliente|cuenta)|"
    r"(?:codice|numero|n\.)[ \t]+(?:cliente|socio|tessera)|"
    r"klant-?nummer|lid-?nummer|lidmaatschapsnummer|(?:numer|nr\.?)[ \t]+(?:klienta|członkowski|konta)|"
    r"membership(?:[ \t]+(?:no\.?|nr\.?|number))?|"
    r"(?:loyalty|member(?:ship)?|library)[ \t]+card(?:[ \t]+(?:no\.?|number))?"
)
_CUED = re.compile(
    rf"(?<![\w.])(?P<cue>{_NUMBER_CUES}|{_USERNAME_CUES})"
    r"(?P<sep>[\"']?[ \t]*#?[ \t]*(?:[:=]|\bis\b)[ \t]*|[ \t]*#[ \t]*|[ \t]+)"
    r"[\"']?(?P<value>[A-Za-z0-9](?:[A-Za-z0-9._#-]*[A-Za-z0-9])?)",
    re.IGNORECASE,
)
# A chat log line's speaker: "<kmiller88> pushed the fix", "[10:42] <dmueller_7> …", irssi's
# "14:03 < anna_k> thanks" (with a mode sign such as "@" or "+" before an operator's nick). The
# line must go on after the nick, and the nick may not be closed later as an element ("<ul> … </ul>")
# or be an HTML/XML tag name; a one- or two-letter nick is too often a tag or a generic ("<T>").
_CHAT_NICK = re.compile(
    r"^[ \t]*(?:\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]*)?<[ \t]?[@+%&~]?"
    r"(?P<nick>[A-Za-z_`|^\\{}\[\]][\w`|^\\{}\[\]-]{2,31})>[ \t]+\S",
    re.MULTILINE,
)
_MARKUP_TAGS = frozenset(
    """
    html head body div span table thead tbody tfoot tr td th ul ol li dl dt dd pre code img nav main
    section article aside header footer form input button label select option textarea script style
    link meta title strong em small sub sup br hr iframe canvas svg path template slot summary details
    figure figcaption blockquote abbr cite kbd samp var mark time video audio source picture project
    dependency dependencies configuration plugin plugins build version groupid artifactid scope name
    value key string integer item list map entry bean property root xml
    """.split()
)
_USERNAME_CUE = re.compile(rf"(?:{_USERNAME_CUES})$", re.IGNORECASE)
# Prose that puts a username next. Two strengths of cue:
# - naming it: "my username on staging is X", "the account name on the old server was X" (the
#   words between the cue and "is" must start with a preposition, so "the user agent was curl8"
#   and "the login endpoint was v2_auth" are not read as usernames);
# - an action on a person: "assign the ticket to X", "logged in as X", "DM X", "cc X": the value
#   must also contain a known first name or surname ("amara7305", "kfischer3", "priya_r"), so
#   "ping host1" and "give the job to worker_pool2" survive.
# Either way only a value shaped like a username counts (see _looks_like_username), so "assign
# the ticket to whoever" and "assign it to sprint 42" survive.
_PROSE_CUED = re.compile(
    r"(?:(?P<naming>\b(?:user(?:[ \t]?name)?|login|handle|nick(?:name)?|screen[ \t]?name|account[ \t]?name|"
    r"alias)\b(?:[ \t]+(?:on|for|at|in|with|of)\b[^\n.!?:;=]{0,25}?)?[ \t]+(?:is|was))"
    r"|\b(?:re)?assign(?:ed|ing|s)?\b(?:[ \t]+[\w'-]+){0,3}?[ \t]+to"
    r"|\b(?:hand(?:ed|ing|s)?|give|gave|giving|escalate[ds]?|delegate[ds]?|transfer(?:red|s)?)\b"
    r"(?:[ \t]+[\w'-]+){0,3}?(?:[ \t]+over)?[ \t]+to"
    r"|\b(?:logged|signed)[ \t]+(?:in|on)[ \t]+as|\b(?:dm|pm|cc|ping)\b)"
    r"[ \t]+(?P<value>[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])(?![\w@-]|\.\w)",
    re.IGNORECASE,
)
# Where _PROSE_CUED may start: searching for these words first and matching the full pattern only
# there is ~2.5x faster than running the full pattern over the text.
_PROSE_CUE_START = re.compile(
    r"\b(?:user|login|handle|nick|screen|account|alias|(?:re)?assign|hand|giv|gave|escalat|delegat|transfer|"
    r"logged|signed|dm|pm|cc|ping)",
    re.IGNORECASE,
)
# "jdoe42", "theamara6904", "devon_88", "sofia.b83", "priya_r", "hollis_w_1987"
_USERNAME_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*")
# Versions, file names and technical terms that share that shape: "python3.12", "h264", "ipv6".
_VERSIONISH = re.compile(r"[a-z]{1,2}\d+|[a-z]+\d+(?:\.\d+)+|.*\.(?:py|js|ts|rb|go|md|txt|json|yml|yaml)")
_TECH_TERMS = frozenset(
    "utf8 utf16 utf32 md5 sha1 sha256 sha512 ipv4 ipv6 mp3 mp4 h264 h265 x86 x64 arm64 amd64 win32 win64 "
    "i18n l10n k8s a11y o11y oauth2 http2 http3 tls13 base64 log4j gpt4 gpt35 p50 p90 p95 p99".split()
)
_VERSION = re.compile(r"v?\d+(?:\.\d+)+")
_COMMON_VALUES = frozenset(
    "the a an is are was be to of in on for and or not no yes none null required optional field name "
    "format must should will can with from by as id ids number agent account accounts data info "
    "settings profile model table list page type value string int text".split()
)
# After a value: a call, index or attribute means code (`uid = urlsafe_base64_decode(…)`).
_CODE_CONTINUES = re.compile(r"[(\[]|\.(?=\w)")
# "dashboard uid …", "folder uid …": the unique id of a thing, not a user id (Grafana, Kubernetes
# and many APIs call every object's id "uid").
_THING_BEFORE_UID = re.compile(
    r"\b(?:dashboards?|panels?|folders?|datasources?|sources?|alerts?|rules?|objects?|resources?|"
    r"documents?|docs?|files?|nodes?|pods?|items?|records?|entit(?:y|ies)|events?|messages?|devices?|"
    r"widgets?|charts?|reports?|quer(?:y|ies)|templates?|stacks?|apps?|applications?|services?|"
    r"containers?|volumes?|disks?|images?|snapshots?|jobs?|tasks?|workflows?|playlists?|libraries|"
    r"library|contact[ \t]?points?|notifiers?|channels?|plugins?|annotations?)[ \t]+$",
    re.IGNORECASE,
)
# Where a "name=value" username ends in a query string, env line or command line.
_QUERY_VALUE_END = re.compile(r"$|[&;\s]", re.MULTILINE)
# Where a bare lowercase username may end: the end of the line or a separator, not more prose.
_VALUE_END = re.compile(r"[ \t]*(?:$|[,;)\]}|&]|[ \t]\()", re.MULTILINE)


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for match in _MENTION.finditer(text):
        if not _is_decorator(scan, match):
            yield Candidate("id", match.start(), match.end(), "mention", PRIORITY_MENTION)
    for match in _SLACK_ID.finditer(text):
        group = "id" if match.group("id") else "bare"
        if group == "bare" and not _has_letters_and_digits(match.group(group)):
            continue
        if group == "bare" and isin.is_valid(match.group(group)):
            continue  # a security's ISIN ("US0378331005") has a Slack id's shape
        yield Candidate("id", *match.span(group), "slack_member_id", PRIORITY_FORMAT)
    for match in _VENDOR_ID.finditer(text):
        suffix = match.group().split("_", 1)[1]
        if any(ch.isdigit() for ch in suffix) or (len(suffix) >= 8 and not suffix.islower()):
            yield Candidate("id", *match.span(), "customer_id", PRIORITY_FORMAT)
    for match in _ARN_ACCOUNT.finditer(text):
        yield Candidate("id", *match.span("id"), "aws_account_id", PRIORITY_FORMAT)
    for match in _DISCORD_TAG.finditer(text):
        yield Candidate("id", *match.span("id"), "discord_tag", PRIORITY_FORMAT)
    for match in _CHAT_NICK.finditer(text):
        nick = match.group("nick")
        if nick.lower() not in _MARKUP_TAGS and f"</{nick}>" not in text:
            yield Candidate("id", *match.span("nick"), "chat_nick", PRIORITY_MENTION)
    for match in _CUED.finditer(text):
        if _is_account_value(scan, match):
            yield Candidate("id", *match.span("value"), "account_cue", PRIORITY_CUE)
    for start in _PROSE_CUE_START.finditer(text):
        cued = _PROSE_CUED.match(text, start.start())
        if cued and _looks_like_username(cued.group("value"), named=bool(cued.group("naming"))):
            yield Candidate("id", *cued.span("value"), "username_in_prose", PRIORITY_CUE)


def _looks_like_username(value: str, *, named: bool) -> bool:
    """Lowercase, 4–32 characters, made like a handle rather than a word (letters with digits
    after them, or parts joined by "_", "." or "-"), and not a version or a tech term.

    A part of the value must be a known first name or surname, or a surname after a one-letter
    initial ("amara7305", "jdoe42", "kfischer3", "priya_r"); when the prose called it a username
    (named), digits are enough ("qa.runner07").
    """
    if not 4 <= len(value) <= 32 or not _USERNAME_SHAPE.fullmatch(value) or _VERSIONISH.fullmatch(value):
        return False
    if value in _TECH_TERMS:
        return False
    letters = re.match(r"[a-z]+", value)
    if letters and letters.group() in lexicon.TECH_WORDS:
        return False  # "python3", "node18", "postgres16"
    if not any(ch.isdigit() for ch in value) and not any(ch in value for ch in "._-"):
        return False
    return (named and any(ch.isdigit() for ch in value)) or _contains_a_name(value)


def _contains_a_name(value: str) -> bool:
    first, last, common = lexicon.first_names(), lexicon.last_names(), lexicon.common_words()
    for part in re.findall(r"[a-z]{3,}", value):
        if part in common:
            continue
        if part in first or part in last or (len(part) >= 4 and part[1:] in last):
            return True
    return False


def _is_decorator(scan: Scan, match: re.Match[str]) -> bool:
    handle = match.group("handle")
    if handle.lower() in _AT_WORDS or handle.split(".")[0].lower() in _AT_WORDS:
        return True
    # "@property" alone on its line (Python decorators, Java annotations).
    return not scan.line_before(match.start()).strip() and not scan.line_after(match.end()).strip()


def _has_letters_and_digits(value: str) -> bool:
    return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value[1:])


# The value is the start of a longer number: an amount ("12,345.67", "12 345 678 Ft") or digits in
# groups that the labelled rules read whole.
_BARE_CUES = frozenset({"account", "acct", "customer", "subscriber", "member"})
_NANP_SHAPE = re.compile(r"\d{3}([-.])\d{3}\1\d{4}")
_NUMBER_GOES_ON = re.compile(r"[.,']\d| \d{3}(?!\d)")


def _is_account_value(scan: Scan, match: re.Match[str]) -> bool:
    value = match.group("value")
    digits = sum(ch.isdigit() for ch in value)
    if match.group("cue").lower() == "uid" and _THING_BEFORE_UID.search(scan.line_before(match.start(), 30)):
        return False
    if digits >= 2:
        # "customer 415-555-0142 called": a phone's shape after a bare word is the phone rules' call
        if match.group("cue").lower() in _BARE_CUES and _NANP_SHAPE.fullmatch(value):
            return False
        # "account 12345678 dollars" is an amount, as in the labelled rules
        if value.isdigit() and (QUANTITY_AFTER.match(scan.text, match.end("value"))
                                or _NUMBER_GOES_ON.match(scan.text, match.end("value"))):
            return False
        return not (_VERSION.fullmatch(value) or _CODE_CONTINUES.match(scan.text, match.end("value")))
    if not _USERNAME_CUE.fullmatch(match.group("cue")):
        return False
    if digits:
        # One digit: "Jira user jsmith2", "Okta login mdiaz7". Shaped like a handle and holding a
        # known name, as a bare username in prose must be; "user table1" stays.
        return _looks_like_username(value, named=False) and not _CODE_CONTINUES.match(
            scan.text, match.end("value"))
    # A letters-only value: "username: mkowalski", "login=jvasquez", "GitHub user octocat-dev".
    if value.lower() in _COMMON_VALUES or not value.islower() or len(value) < 3:
        return False
    sep = match.group("sep")
    vendor = match.group("cue").lower().startswith(("github", "gitlab", "slack"))
    if vendor:
        return True
    # "login=jvasquez&ts=…" (query string, env, CLI), not `f(user=actor)` or `user = backend.get(…)`.
    if sep == "=":
        return bool(_QUERY_VALUE_END.match(scan.text, match.end("value")))
    if sep.strip() != ":":
        return False
    if any(ch in value for ch in "._-"):
        return not _CODE_CONTINUES.match(scan.text, match.end("value"))
    # "User: please use tabs" is a chat transcript, not a username: the value must stand alone.
    return bool(_VALUE_END.match(scan.text, match.end("value")))
