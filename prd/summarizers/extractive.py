"""The default summariser: picks items from the digest to fill a character budget.

Deterministic, offline, no model: the same log always gives the same summary. Sections
take turns, one item each, so a long list of decisions cannot crowd out the learnings;
each section says how many items it left out.
"""

from __future__ import annotations

from prd.summarizers.base import Digest

ITEM_MAX_CHARS = 240


def clip(text: str, max_chars: int) -> str:
    """`text` cut at a word boundary to at most `max_chars` characters, with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1].rsplit(" ", 1)[0] if " " in text[: max_chars - 1] else text[: max_chars - 1]
    return cut.rstrip(",;: ") + "…"


class ExtractiveSummarizer:
    name = "extractive"

    def summarise(self, digest: Digest, *, max_chars: int) -> str:
        lead = clip(digest.lead, max_chars)
        sections = [(s.heading, [clip(i, ITEM_MAX_CHARS) for i in s.items]) for s in digest.sections
                    if s.items]
        chosen: list[list[str]] = [[] for _ in sections]

        def render() -> str:
            parts = [lead]
            for (heading, items), picked in zip(sections, chosen, strict=True):
                if picked:
                    more = len(items) - len(picked)
                    parts.append(f"{heading}: {'; '.join(picked)}" + (f" (+{more} more)." if more else "."))
            return " ".join(parts)

        # Round robin, one item per section per round, in section order: no section can
        # crowd out the others, and earlier sections win the last of the budget. A section
        # stops at its first item that does not fit, so what is shown is always its first N.
        open_sections = set(range(len(sections)))
        while open_sections:
            for index in sorted(open_sections):
                items = sections[index][1]
                chosen[index].append(items[len(chosen[index])])
                if len(render()) > max_chars:
                    chosen[index].pop()
                    open_sections.discard(index)
                elif len(chosen[index]) == len(items):
                    open_sections.discard(index)
        return render()
