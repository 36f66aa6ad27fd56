"""The default summariser: picks items from the digest to fill a character budget.

Deterministic, offline, no model: the same log always gives the same summary. Every
section first gets its leading item, so a long list of decisions cannot crowd out the
learnings; the remaining budget then goes to further items in section order, and each
section says how many items it left out.
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
        used = len(lead)

        def cost(index: int, item: str) -> int:
            heading = sections[index][0]
            # A section's first item pays for its heading; later items for the separator.
            return len(item) + (len(heading) + 4 if not chosen[index] else 2)

        # Pass 1: the first item of each section; pass 2: the rest, in section order.
        for index, (_, items) in enumerate(sections):
            if used + cost(index, items[0]) + 16 <= max_chars:
                used += cost(index, items[0])
                chosen[index].append(items[0])
        for index, (_, items) in enumerate(sections):
            if not chosen[index]:
                continue
            for item in items[len(chosen[index]):]:
                if used + cost(index, item) + 16 > max_chars:
                    break
                used += cost(index, item)
                chosen[index].append(item)

        parts = [lead]
        for (heading, items), picked in zip(sections, chosen, strict=True):
            if not picked:
                continue
            more = len(items) - len(picked)
            text = f"{heading}: {'; '.join(picked)}"
            parts.append(f"{text} (+{more} more)." if more else f"{text}.")
        return clip(" ".join(parts), max_chars)
