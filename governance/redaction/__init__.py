"""PII and secret redaction for text SAM stores (docs/redaction.md).

    >>> redact_text("Email me at bob@example.com").text
    'Email me at [email]'

See docs/redaction.md for what each kind covers, how, and the measured quality.
"""

from .engine import redact_text
from .findings import KINDS, PLACEHOLDERS, Finding, Redacted

__all__ = ["KINDS", "PLACEHOLDERS", "Finding", "Redacted", "redact_text"]
