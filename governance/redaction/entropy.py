"""Random-looking strings: the last line of defence for credentials with no known format.

A token counts as random when its characters are spread evenly (Shannon entropy) and its
character classes keep switching (random base62 switches between upper, lower and digit on
~60% of neighbouring pairs; identifiers such as `getUserById2` on ~20%). Without a nearby word
such as "token" or "key" the bar is high, so hashes, ULIDs and identifiers survive; with one it
is lower. Shapes that are random by design but public (git SHAs and other hex digests, also after
a readable name as in cache keys, UUIDs, ULIDs, SRI hashes, SSH public keys, certificates, base64
data URIs) are skipped.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator

from .findings import Candidate
from .scan import Scan, Spans

PRIORITY = 30

_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=~-])[A-Za-z0-9_+/~-]{16,}={0,2}(?![A-Za-z0-9_+/=~-])")
_CONTEXT = re.compile(
    r"(?i)(?:key|secret|token|passw|pwd|credential|auth|bearer|signature|salt|cookie|session)"
)
_WORD_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PATH_SEGMENT = re.compile(r"[a-z][a-z0-9_.-]*|[A-Z]{1,5}|\d{1,6}")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_HEX = re.compile(r"[0-9a-fA-F-]+")
_ULID = re.compile(r"(?:[a-z]+_)?[0-9A-HJKMNP-TV-Z]{26}")
_PUBLIC_PREFIX = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+$"
)
_DIGEST_PREFIX = re.compile(r"(?:sha\d+|md5)[-:]", re.IGNORECASE)
# A name, then a digest: cache keys and content-addressed files ("deps-<sha256>",
# "node-modules-Linux-x64-<sha256>", "app.3f2a…e1.js"). The prefix is made of short readable parts;
# a secret's own prefix ("key-<hex>", "sk-<hex>") does not make it public.
_NAMED_DIGEST = re.compile(r"(?P<prefix>(?:[A-Za-z0-9.]{1,16}[-_.])+)(?:[0-9a-f]{40,}|[0-9A-F]{40,})")
_SECRET_PREFIX_PART = frozenset(
    "key keys secret secrets token tokens sk pk rk api apikey pat auth access private password pass pwd "
    "session sess cred creds credential credentials bearer".split()
)
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK|CERTIFICATE REQUEST)-----"
    r".*?(?:-----END [A-Z ]+-----|\Z)",
    re.DOTALL,
)
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    public = Spans([m.span() for pattern in (_PUBLIC_BLOCK, _DATA_URI) for m in pattern.finditer(text)])
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        token = match.group()
        if public.overlaps(start, end) or scan.urls.overlaps(start, end):
            continue
        if _is_public_shape(token) or _PUBLIC_PREFIX.search(scan.line_before(start, 40)):
            continue
        in_context = bool(_CONTEXT.search(scan.line_before(start, 40)))
        if looks_random(token, in_context=in_context):
            yield Candidate("secret", start, end, "entropy", PRIORITY)


def _is_public_shape(token: str) -> bool:
    return bool(_HEX.fullmatch(token) or _ULID.fullmatch(token) or _DIGEST_PREFIX.match(token)
                or _is_named_digest(token))


def _is_named_digest(token: str) -> bool:
    match = _NAMED_DIGEST.fullmatch(token)
    if not match:
        return False
    parts = re.split(r"[-_.]", match.group("prefix").lower())
    return not any(part in _SECRET_PREFIX_PART for part in parts)


def _is_made_of_words(token: str) -> bool:
    """`SetUnusablePasswordMixin`, `src/components/UserProfile`, `default_token_generator`: no
    digits, and every CamelCase or separated piece is a pronounceable word of 3+ letters."""
    if token.count("/") >= 2 and all(_PATH_SEGMENT.fullmatch(s) for s in token.split("/") if s):
        return True  # a URL or file path: "MEM/versions/1/restore/"
    if any(ch.isdigit() for ch in token):
        return False
    pieces = _WORD_PIECE.findall(token)
    return bool(pieces) and all(len(p) >= 3 and _VOWEL.search(p) for p in pieces)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def class_switch_ratio(value: str) -> float:
    """Share of neighbouring character pairs whose classes (upper, lower, digit, other) differ."""
    def cls(ch: str) -> int:
        return 0 if ch.isupper() else 1 if ch.islower() else 2 if ch.isdigit() else 3
    if len(value) < 2:
        return 0.0
    return sum(cls(a) != cls(b) for a, b in itertools.pairwise(value)) / (len(value) - 1)


def looks_random(token: str, *, in_context: bool) -> bool:
    body = token.rstrip("=")
    if _is_made_of_words(body):
        return False
    has_upper = any(ch.isupper() for ch in body)
    has_lower = any(ch.islower() for ch in body)
    has_digit = any(ch.isdigit() for ch in body)
    entropy = shannon_entropy(body)
    switches = class_switch_ratio(body)
    if in_context:
        classes = has_upper + has_lower + has_digit
        return len(body) >= 16 and classes >= 2 and entropy >= 3.3 and switches >= 0.3
    return len(body) >= 20 and has_upper and has_lower and has_digit and entropy >= 3.8 and switches >= 0.45
