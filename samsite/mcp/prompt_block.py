"""Hold `augment_prompt`'s answer to a token budget by leaving notes out of its block.

The block (retrieval.augment.render) is the opening delimiter, a preamble, then notes under
category headings, then the closing delimiter. Notes are left out from the end; a heading
left with no note goes too; the delimiters always stay, so what remains is still quoted data.
"""

from __future__ import annotations

from typing import Any

from samsite.mcp import budget

NOTE = "- "


def _kept(lines: list[str], notes: int, *, preamble: bool = True) -> str:
    """The block with its first `notes` note lines (and the headings they sit under)."""
    opening, closing = lines[0], lines[-1]
    body: list[str] = []
    heading: str | None = None
    shown = 0
    for line in lines[2:-1]:
        if not line.startswith(NOTE):
            heading = line
            continue
        if shown == notes:
            break
        if heading is not None:
            body.append(heading)
            heading = None
        body.append(line)
        shown += 1
    head = [opening, lines[1]] if preamble else [opening]
    return "\n".join([*head, *body, closing])


def fit(answer: dict[str, Any], *, limit: int) -> dict[str, Any]:
    """`answer` ({block, notes, left_out, …}) within `limit` tokens, with `truncated`."""
    whole = {**answer, "truncated": False}
    if budget_ok(whole, limit) or not answer["block"]:
        return whole
    lines = answer["block"].splitlines()
    total = sum(line.startswith(NOTE) for line in lines)

    def trimmed(notes: int, block: str | None = None) -> dict[str, Any]:
        return {**answer, "block": block if block is not None else _kept(lines, notes), "notes": notes,
                "left_out": answer["left_out"] + total - notes, "truncated": True}

    low, high = 0, total
    while low < high:  # the most notes that fit: more notes never cost fewer tokens
        middle = (low + high + 1) // 2
        if budget_ok(trimmed(middle), limit):
            low = middle
        else:
            high = middle - 1
    if low:
        return trimmed(low)
    # Not one whole note: the first, cut to fit, between the delimiters, without the preamble.
    first = next(line for line in lines if line.startswith(NOTE))
    opening, closing = lines[0], lines[-1]
    note = budget.longest(first, lambda candidate: budget_ok(
        trimmed(1, f"{opening}\n{candidate}\n{closing}"), limit))
    if note:
        return trimmed(1, f"{opening}\n{note}\n{closing}")
    # Nor beside the answer's counts: the block alone.
    note = budget.longest(first, lambda candidate: budget_ok(
        {"block": f"{opening}\n{candidate}\n{closing}", "truncated": True}, limit))
    return {"block": f"{opening}\n{note}\n{closing}" if note else "", "truncated": True}


def budget_ok(answer: dict[str, Any], limit: int) -> bool:
    return budget.tokens_of(answer) <= limit
