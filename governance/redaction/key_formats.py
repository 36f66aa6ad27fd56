"""Credentials with a recognisable format: cloud keys, platform tokens, private keys, JWTs.

Most patterns come from detect-secrets (Yelp), whose plugins are regex detectors kept up to date
with providers' formats; SAM reads their `denylist` patterns and finds spans with them. Formats
detect-secrets lacks or matches only in part (newer GitHub, OpenAI, Anthropic and Stripe keys,
Slack tokens with mixed case, whole PEM blocks rather than their BEGIN line) are written here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from .findings import Candidate
from .scan import Scan

PRIORITY = 100

# Plugins left out: IPPublic (an IP address is not a credential), Artifactory (its "AP…" pattern
# matches ordinary identifiers), Cloudant/IBM/SoftLayer (keyword rules covered by assignments.py),
# BasicAuth (assignments.py also handles password-only URLs), PrivateKey (matches the BEGIN line
# only; the whole block is matched below).
_DETECT_SECRETS_PLUGINS = {
    "aws_key": AWSKeyDetector,
    "azure_storage_key": AzureStorageKeyDetector,
    "discord_token": DiscordBotTokenDetector,
    "github_token": GitHubTokenDetector,
    "gitlab_token": GitLabTokenDetector,
    "jwt": JwtTokenDetector,
    "mailchimp_key": MailchimpDetector,
    "npm_token": NpmDetector,
    "openai_key": OpenAIDetector,
    "pypi_token": PypiTokenDetector,
    "sendgrid_key": SendGridDetector,
    "slack_token": SlackDetector,
    "square_secret": SquareOAuthDetector,
    "stripe_key": StripeDetector,
    "telegram_token": TelegramBotTokenDetector,
    "twilio_key": TwilioKeyDetector,
}

_PEM_NAME = r"[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"
# No leading \b: a pattern that starts with a literal lets the regex engine skip ahead to it, which
# is ~20 times faster on text without the literal; the word boundary is checked in find() instead.
_OWN_FORMATS: tuple[tuple[str, str], ...] = (
    # Whole block, including an unterminated one (a truncated paste is still a leak).
    ("private_key", rf"-----BEGIN {_PEM_NAME}-----.*?(?:-----END {_PEM_NAME}-----|\Z)"),
    ("private_key", r"PuTTY-User-Key-File-\d: .*?(?:Private-MAC: \w+|\Z)"),
    ("github_token", r"github_pat_[A-Za-z0-9_]{22,255}"),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    ("openai_key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
    ("anthropic_key", r"sk-ant-[a-z]{3,8}\d{2}-[A-Za-z0-9_-]{20,}"),
    ("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("stripe_key", r"whsec_[A-Za-z0-9+/=]{20,}"),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}"),
    ("google_oauth_secret", r"GOCSPX-[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack_token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}"),
    ("pypi_token", r"pypi-[A-Za-z0-9_-]{50,}"),
    ("vault_token", r"hv[sbr]\.[A-Za-z0-9_-]{20,}"),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("aws_key", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("azure_key", r"(?:SharedAccessKey|AccountKey)=[A-Za-z0-9+/]{20,}={0,2}"),
    ("databricks_token", r"dapi[a-f0-9]{32}\b"),
    ("linear_key", r"lin_api_[A-Za-z0-9]{40}\b"),
    ("sentry_token", r"sntrys_[A-Za-z0-9+/=_-]{40,}"),
)

# A match that stops inside a token is widened to the token's end, so no tail is left behind.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=.-]*")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_+/=-]")
_SPACE = re.compile(r"\s")
_WORD_CHAR = re.compile(r"[A-Za-z0-9_]")


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """(rule, pattern, must start a token) for every format."""
    patterns: list[tuple[str, re.Pattern[str], bool]] = []
    for rule, plugin in _DETECT_SECRETS_PLUGINS.items():
        # detect-secrets types denylist as an abstract property; detectors set a tuple.
        patterns.extend((rule, regex, True) for regex in plugin.denylist)  # type: ignore[attr-defined]
    # SAM's own formats are a fixed prefix plus a long random tail, too specific to occur by
    # chance inside a word: a token pasted straight after other text ("…?b=cghp_…",
    # "example.comghp_…") is still that token, and is redacted from its prefix on.
    patterns.extend((rule, re.compile(source, re.DOTALL), False) for rule, source in _OWN_FORMATS)
    return tuple(patterns)


def find(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for rule, pattern, starts_token in _patterns():
        for match in pattern.finditer(text):
            # detect-secrets patterns with a group put the secret in group 1 and context around it.
            start, end = match.span(1) if pattern.groups and match.group(1) else match.span()
            if rule != "private_key":
                start, end = _whole_token(text, start, end)
            # detect-secrets' looser formats must start a token to count.
            if start == end or (starts_token and start > 0 and _WORD_CHAR.match(text, start - 1)):
                continue
            yield Candidate("secret", start, end, rule, PRIORITY)


def _whole_token(text: str, start: int, end: int) -> tuple[int, int]:
    """Trim separators that detect-secrets includes in a match and widen to the token's end."""
    while start < end and not _TOKEN_CHARS.match(text, start):
        start += 1
    space = _SPACE.search(text, start, end)
    if space:
        end = space.start()
    while end > start and not _TOKEN_CHARS.match(text, end - 1):
        end -= 1
    tail = _TOKEN_TAIL.match(text, end)
    if tail:
        end = tail.end()
    # A full stop that ends a sentence is not part of the token.
    while end > start and text[end - 1] in ".-":
        end -= 1
    return start, end
