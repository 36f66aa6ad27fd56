"""The value types of the redaction engine: what was found, and the redacted text."""

from __future__ import annotations

from dataclasses import dataclass

#: Every kind of personal or secret data SAM redacts, in the order of docs/redaction.md, "Interface".
KINDS: tuple[str, ...] = ("email", "phone", "address", "name", "id", "secret")

#: What replaces a finding of each kind in the stored text.
PLACEHOLDERS: dict[str, str] = {kind: f"[{kind}]" for kind in KINDS}


@dataclass(frozen=True)
class Finding:
    """One redacted span. Offsets index the ORIGINAL text: text[start:end] is what was removed."""

    kind: str  # one of KINDS
    start: int
    end: int
    rule: str  # the recognizer that matched, e.g. "email", "phonenumbers", "github_token", "entropy"


@dataclass(frozen=True)
class Redacted:
    """The text with every finding replaced by its placeholder, and the findings sorted by start."""

    text: str
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Candidate:
    """A recognizer's proposal, before overlaps are resolved.

    `priority` orders overlapping candidates: a specific format (a GitHub token, an email) beats a
    contextual guess (a capitalised pair of words, a high-entropy string).
    """

    kind: str
    start: int
    end: int
    rule: str
    priority: int

    def finding(self) -> Finding:
        return Finding(kind=self.kind, start=self.start, end=self.end, rule=self.rule)
