"""Email addresses, including the "name [at] domain [dot] com" spelling people use to dodge scrapers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import Candidate
from .scan import Scan

PRIORITY = 90

# Local part: word characters (any script) joined by . + % - and inner apostrophes (o'connor),
# and a bracketed tag after a part, as in the addresses of GitHub apps ("…+renovate[bot]@…").
# It may not start after another local-part character, so "x.bob@" is matched whole, not as "bob@".
_EMAIL = re.compile(
    r"(?<![\w.+%-])"
    r"[\w+%-]+(?:\[[^\W\d_]+\])?(?:[.'’][\w+%-]+(?:\[[^\W\d_]+\])?)*"
    r"@"
    r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,24}"
    r"(?![\w-]|\.[^\W_])"
)
# "tom [at] brightlabs [dot] io", "tom (at) brightlabs (dot) io", "tom{at}brightlabs.io": the "at"
# in brackets of any kind, the dots spelt out the same way or written as dots.
_BRACKETED = re.compile(
    r"(?<![\w.+-])[\w.+-]+\s*[\[({]\s*at\s*[\])}]\s*[\w-]+"
    r"(?:(?:\s*[\[({]\s*dot\s*[\])}]\s*|\.)[\w-]+)*(?:\s*[\[({]\s*dot\s*[\])}]\s*|\.)[^\W\d_]{2,24}\b",
    re.IGNORECASE,
)
# "tom at brightlabs dot io", "kenji dot sato at example dot jp": only with a common generic or
# country top-level domain, or ordinary prose would match.
_SPELLED = re.compile(
    r"\b[\w+-]+(?: dot [\w+-]+)* at [\w-]+(?: dot [\w-]+)* dot "
    r"(?:com|org|net|io|dev|edu|gov|info|biz|me|co|uk|de|fr|es|it|nl|eu|pl|ch|at|be|se|no|dk|fi|pt|ie|cz|"
    r"jp|cn|kr|in|br|ca|au|nz|us|ru)\b",
    re.IGNORECASE,
)
# "lisa.chen%40gmail.com" in a query string or a mailto: link, where "@" is URL-encoded as %40.
# The address may follow another escape ("Email%3A%20sofia…"), so it may start right after one.
_PERCENT_ENCODED = re.compile(
    r"(?:(?<=%[0-9A-Fa-f]{2})|(?<![\w.+%-]))[\w+-]+(?:\.[\w+-]+)*%40"
    r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-]|\.[^\W_])"
)
# scp-style git remotes (git@github.com:org/repo.git) name a service account, not a person.
_GIT_REMOTE_TAIL = re.compile(r":[\w~./-]")
# "https://user:pass@host": the part before "@" is a URL's credentials (a secret), not a mailbox.
_URL_USERINFO = re.compile(r"://[^\s/@]*:$")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for match in _EMAIL.finditer(text):
        if _GIT_REMOTE_TAIL.match(text, match.end()) or _URL_USERINFO.search(scan.line_before(match.start())):
            continue
        yield Candidate("email", match.start(), match.end(), "email", PRIORITY)
    if "%40" in text:
        for match in _PERCENT_ENCODED.finditer(text):
            yield Candidate("email", match.start(), match.end(), "email_percent_encoded", PRIORITY)
    # Both spellings need a spelt-out "at" or "dot": a cheap test spares the costlier patterns on
    # almost every text.
    lowered = text.lower()
    for pattern, hint in ((_BRACKETED, "at"), (_SPELLED, " dot ")):
        if hint not in lowered:
            continue
        for match in pattern.finditer(text):
            yield Candidate("email", match.start(), match.end(), "email_obfuscated", PRIORITY)
