"""Fit a tool's answer into a token budget, counted as the model will read it.

A tool answer is an envelope (a few small fields) plus a ranked list. The rule, in rank
order: an item goes in whole if it fits; otherwise in its short form (what it says, without
scores, reasons and provenance); otherwise the list stops there and the answer says
`truncated: true` and how many there were (`total`). When not even the best item's short
form fits, the envelope's fields give way and the best item goes in squeezed: its id and its
headline cut to what fits, ending in "…" (below about 70 tokens, the headline alone: an id is some 20). So an
answer with anything to show is never empty. Counts are of the whole answer as JSON text
(`as_text`, which is the tool's text content, byte for byte), with the tokenizer context
packs use (retrieval.tokens), so the answer is never over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from retrieval.tokens import count_tokens_by_run

# Below this, not even the best item's headline, cut short, fits beside `truncated` and `total`.
MIN_BUDGET = 30
ELLIPSIS = "…"


def as_text(answer: dict[str, Any]) -> str:
    """The answer as the model reads it (the tool's text content)."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"), default=str)


def tokens_of(answer: dict[str, Any]) -> int:
    return count_tokens_by_run(as_text(answer))


def cut(text: str, length: int) -> str:
    """`text` cut to `length` characters (at a word's end when one is near), with "…"."""
    if len(text) <= length:
        return text
    head = text[:length]
    space = head.rfind(" ")
    if space > length * 2 // 3:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def longest(text: str, fits: Callable[[str], bool]) -> str | None:
    """The longest cut of `text` that `fits` (binary search: a longer cut never costs fewer
    tokens, give or take the word boundary, so the result is checked once more)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(cut(text, middle)):
            low = middle
        else:
            high = middle - 1
    best = cut(text, low)
    return best if fits(best) else None


def squeezed(form: dict[str, Any], fits: Callable[[dict[str, Any]], bool], *,
             headline: str) -> dict[str, Any] | None:
    """`form`'s id and its `headline` text cut to fit, or the cut headline alone; None if
    not even that fits."""
    texts = [k for k, v in form.items() if k != "id" and isinstance(v, str)]
    name = headline if headline in form else (texts[0] if texts else headline)
    text = str(form.get(name) or "")
    for base in ({"id": form["id"]} if "id" in form else {}, {}):
        def fits_with(candidate: str, base: dict[str, Any] = base) -> bool:
            return fits({**base, name: candidate})
        found = longest(text, fits_with)
        if found is not None:
            return {**base, name: found}
    return None


def fit(envelope: dict[str, Any], key: str, items: Sequence[dict[str, Any]], *, budget: int,
        short: Callable[[dict[str, Any]], dict[str, Any]], headline: str = "title") -> dict[str, Any]:
    """`envelope` with `key` holding as many of `items` as fit in `budget` tokens.

    The answer always carries `truncated` and `total`. If not even the best item's short
    form fits beside the envelope, the envelope's fields are dropped and the best item goes
    in squeezed (`squeezed`: its id and its `headline` cut short), so a list with anything
    in it never comes back empty.
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
    if tokens_of(answer(truncated=False)) <= budget:
        for index, item in enumerate(items):
            last = index == total - 1
            for form in (item, short(item)):
                kept.append(form)
                # Counted with the flag the answer would carry if the list stopped here.
                if tokens_of(answer(truncated=not last)) <= budget:
                    break
                kept.pop()
            else:
                break
        if kept or not items:
            return answer(truncated=len(kept) < total)
    if not items:
        return {key: [], "truncated": True, "total": total}
    # Not even the best item's short form beside the envelope: the best item alone, squeezed.
    # `truncated`: the answer is not whole, even when its one item is all there was.
    bare = {key: [short(items[0])], "truncated": True, "total": total}
    if tokens_of(bare) <= budget:
        return bare
    best = squeezed(short(items[0]), lambda form: tokens_of({key: [form], "truncated": True, "total": total})
                    <= budget, headline=headline)
    return {key: [best] if best else [], "truncated": True, "total": total}


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
    if low == 0 and any(line.strip() for line in lines):
        # Not one whole line: the first line with words in it, cut to fit.
        first = next(line for line in lines if line.strip())
        shown = longest(first, lambda candidate: tokens_of(
            {**envelope, key: candidate, "truncated": True, "total": len(lines)}) <= budget)
        if shown is None:
            shown = longest(first, lambda candidate: tokens_of(
                {key: candidate, "truncated": True, "total": len(lines)}) <= budget)
            return {key: shown or "", "truncated": True, "total": len(lines)}
        return {**envelope, key: shown, "truncated": True, "total": len(lines)}
    if tokens_of(answer(low)) > budget:
        return {key: "", "truncated": True, "total": len(lines)}
    return answer(low)
