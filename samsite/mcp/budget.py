"""Fit a tool's answer into a token budget, counted as the model will read it.

A tool answer is an envelope (a few small fields) plus a ranked list. The rule, in rank
order: an item goes in whole if it fits; otherwise in its short form (what it says, without
scores, reasons and provenance); otherwise the list stops there and the answer says
`truncated: true` and how many there were (`total`). Counts are of the whole answer as JSON
text, with the tokenizer context packs use (retrieval.tokens), so the answer is never over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from retrieval.tokens import count_tokens_by_run

# Below this, not even an empty answer with its `truncated` and `total` fits.
MIN_BUDGET = 50


def as_text(answer: dict[str, Any]) -> str:
    """The answer as the model reads it (the tool's text content)."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"), default=str)


def tokens_of(answer: dict[str, Any]) -> int:
    return count_tokens_by_run(as_text(answer))


def fit(envelope: dict[str, Any], key: str, items: Sequence[dict[str, Any]], *, budget: int,
        short: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """`envelope` with `key` holding as many of `items` as fit in `budget` tokens.

    The answer always carries `truncated` and `total`. If the envelope alone does not fit,
    its fields are dropped too, leaving `{key: [], truncated: true, total: N}`.
    """
    if budget < MIN_BUDGET:
        raise ValueError(f"token_budget must be at least {MIN_BUDGET}.")
    total = len(items)
    kept: list[dict[str, Any]] = []

    def answer(truncated: bool) -> dict[str, Any]:
        return {**envelope, key: kept, "truncated": truncated, "total": total}

    kept[:] = items
    if tokens_of(answer(truncated=False)) <= budget:
        return answer(truncated=False)  # the usual case: one count
    kept.clear()
    if tokens_of(answer(truncated=False)) > budget:
        return {key: [], "truncated": True, "total": total}
    for index, item in enumerate(items):
        last = index == total - 1
        for form in (item, short(item)):
            kept.append(form)
            # Counted with the flag the answer would carry if the list stopped here.
            if tokens_of(answer(truncated=not last)) <= budget:
                break
            kept.pop()
        else:
            return answer(truncated=True)
    return answer(truncated=False)


def fit_text(envelope: dict[str, Any], key: str, text: str, *, budget: int) -> dict[str, Any]:
    """`envelope` with `key` holding as many whole lines of `text` as fit in `budget` tokens,
    with `truncated` and `total` (lines), by the same count as `fit`."""
    if budget < MIN_BUDGET:
        raise ValueError(f"token_budget must be at least {MIN_BUDGET}.")
    lines = text.splitlines()

    def answer(count: int) -> dict[str, Any]:
        return {**envelope, key: "\n".join(lines[:count]), "truncated": count < len(lines),
                "total": len(lines)}

    if tokens_of(answer(len(lines))) <= budget:
        return answer(len(lines))
    # The longest prefix that fits: more lines never cost fewer tokens, so search.
    low, high = 0, len(lines)
    while low < high:
        middle = (low + high + 1) // 2
        if tokens_of(answer(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    if tokens_of(answer(low)) > budget:
        return {key: "", "truncated": True, "total": len(lines)}
    return answer(low)
