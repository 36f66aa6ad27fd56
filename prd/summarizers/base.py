"""The summariser interface and the digest it summarises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class SummarizerError(RuntimeError):
    """The summariser could not answer now (unreachable, timed out, bad answer); retry later."""


@dataclass(frozen=True)
class Section:
    """A heading and its items, most important first."""

    heading: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class Digest:
    """What to summarise: a lead line that is always kept, then sections of items.

    Built by prd.digest from an execution's log or a chain's thoughts, so every
    summariser sees the same facts in the same order.
    """

    kind: str  # "execution" or "thinking_chain"
    title: str
    lead: str
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def as_markdown(self, *, max_chars: int = 24_000) -> str:
        """The whole digest as Markdown (for a model prompt), cut at `max_chars`."""
        lines = [f"# {self.title}", "", self.lead]
        for section in self.sections:
            if section.items:
                lines += ["", f"## {section.heading}", *(f"- {item}" for item in section.items)]
        text = "\n".join(lines)
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


class Summarizer(Protocol):
    """Writes a narrative of at most `max_chars` characters from a digest."""

    name: str

    def summarise(self, digest: Digest, *, max_chars: int) -> str:
        """The narrative; raises SummarizerError when it cannot answer now."""
        ...
