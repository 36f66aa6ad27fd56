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
# "tom [at] brightlabs [dot] io", "tom (at) brightlabs (dot) io"
_BRACKETED = re.compile(
    r"(?<![\w.+-])[\w.+-]+\s*[\[(]\s*at\s*[\])]\s*[\w-]+(?:\s*[\[(]\s*dot\s*[\])]\s*[\w-]+)+",
    re.IGNORECASE,
)
# "tom at brightlabs dot io": only with a common top-level domain, or ordinary prose would match.
_SPELLED = re.compile(
    r"\b[\w.+-]+ at [\w-]+(?: dot [\w-]+)* dot (?:com|org|net|io|dev|edu|gov|co|uk|de|fr|es|it|nl|eu)\b",
    re.IGNORECASE,
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
    for pattern in (_BRACKETED, _SPELLED):
        for match in pattern.finditer(text):
            yield Candidate("email", match.start(), match.end(), "email_obfuscated", PRIORITY)
