"""Context packs (seed 004): one selection rendered as JSON for machines and Markdown for prompts.

Order is lost-in-the-middle aware: models attend best to the start and the end of a long
context, so the strongest items go to the head and the tail and the weakest to the middle
(ranks 1, 3, 5, …, 6, 4, 2). A short critical-facts block comes first. Budgets count real
tokens (retrieval.tokens) of exactly the Markdown each item renders to, and trim whole
items, weakest first. Nothing in a pack depends on the wall clock unless asked: generated_at
is the request's as_of, or else the newest updated_at among the included memories, so the
same store and inputs give byte-identical packs.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from retrieval.pipeline import RankedItem, RecallResult
from retrieval.tokens import count_tokens

CONTENT_CHARS = 700
CRITICAL_FACTS = 3


def lost_in_the_middle_order(items: list[RankedItem]) -> list[RankedItem]:
    """[1, 2, 3, 4, 5, 6] -> [1, 3, 5, 6, 4, 2]: strongest at both ends."""
    head = items[0::2]
    tail = items[1::2]
    return head + tail[::-1]


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _content(item: RankedItem) -> str:
    content = item.row["content"]
    return content if len(content) <= CONTENT_CHARS else content[: CONTENT_CHARS - 1].rstrip() + "…"


def _item_markdown(number: int, item: RankedItem) -> str:
    row = item.row
    source = " ".join(str(x) for x in (row["source_type"], row["source_ref"], row["source_uri"]) if x)
    return (
        f"### {number}. {row['title']}\n"
        f"*{row['kind']} · {row['memory_type']} · space {row['space_slug']} · v{row['version']} · "
        f"score {item.score:.3f}*\n\n"
        f"{_content(item)}\n\n"
        f"> Why: {item.rationale}\n\n"
        f"Source: {source} · `{row['id']}`\n"
    )


def _fact_markdown(item: RankedItem) -> str:
    return f"- **{item.row['title']}**: {item.row['summary']} (`{item.id}`)\n"


@dataclass
class ContextPack:
    json: dict[str, Any]
    markdown: str


def build_pack(result: RecallResult, *, pack_type: str, token_budget: int,
               as_of: datetime | None = None) -> ContextPack:
    ranked = list(result.items)
    critical = sorted(
        ranked, key=lambda i: ({"core": 0, "high": 1}.get(i.row["priority"], 2), -i.score, i.id)
    )[:CRITICAL_FACTS]
    header_tokens = sum(count_tokens(_fact_markdown(i)) for i in critical)
    costs = {i.id: count_tokens(_item_markdown(0, i)) for i in ranked}

    kept: list[RankedItem] = []
    used = header_tokens
    # Best first, so trimming starts with the weakest; an item too large for what is left
    # is skipped, and a smaller, weaker one may still fit after it.
    for item in ranked:
        if used + costs[item.id] <= token_budget:
            kept.append(item)
            used += costs[item.id]
    trimmed = len(ranked) - len(kept)
    ordered = lost_in_the_middle_order(kept)
    included = {i.id for i in kept} | {i.id for i in critical}
    newest = max((i.row["updated_at"] for i in ranked if i.id in included), default=None)
    generated_at = _iso(as_of or newest) if (as_of or newest) else None

    items_json = [
        {
            "position": position,
            "rank": kept.index(item) + 1,
            "id": item.id,
            "title": item.row["title"],
            "summary": item.row["summary"],
            "content": _content(item),
            "kind": item.row["kind"],
            "memory_type": item.row["memory_type"],
            "score": round(item.score, 4),
            "signals": item.signals.as_dict(),
            "inclusion_reason": item.rationale,
            "conflict": item.conflict,
            "provenance": {
                "id": item.id,
                "space": item.row["space_slug"],
                "version": item.row["version"],
                "source": {"type": item.row["source_type"], "ref": item.row["source_ref"],
                           "uri": item.row["source_uri"]},
            },
            "tokens": costs[item.id],
        }
        for position, item in enumerate(ordered, start=1)
    ]
    summary = (
        f"{len(kept)} memories from {', '.join(sorted({i.row['space_slug'] for i in kept})) or 'no space'}"
        f" for: {result.query_text[:200] or pack_type + ' context'}."
    )
    pack = {
        "query": result.query_text,
        "generated_at": generated_at,
        "pack_type": pack_type,
        "summary": summary,
        "critical_facts": [
            {"id": i.id, "title": i.row["title"], "fact": i.row["summary"], "priority": i.row["priority"]}
            for i in critical
        ],
        "items": items_json,
        "open_questions": [f for f in result.follow_ups if f["type"] == "clarify_conflict"],
        "token_budget": {"target": token_budget, "used": used, "trimmed": trimmed,
                         "tokenizer": "all-MiniLM-L6-v2 WordPiece"},
        "source_mix": dict(sorted(Counter(i.row["source_type"] for i in kept).items())),
        "inclusion_reason": [{"id": i.id, "reason": i.rationale} for i in kept],
        "profile": result.profile.name,
    }
    return ContextPack(json=pack, markdown=render_markdown(pack, critical, ordered))


def render_markdown(pack: dict[str, Any], critical: list[RankedItem], ordered: list[RankedItem]) -> str:
    budget = pack["token_budget"]
    lines = [
        f"# Context pack ({pack['pack_type']})\n",
        f"*{pack['summary']}*  \n"
        f"*generated {pack['generated_at'] or 'n/a'} · {budget['used']}/{budget['target']} tokens"
        f" · {budget['trimmed']} trimmed*\n",
    ]
    if critical:
        lines.append("## Critical facts\n")
        lines.extend(_fact_markdown(i) for i in critical)
        lines.append("")
    if ordered:
        lines.append("## Memories\n")
        lines.extend(_item_markdown(number, item) for number, item in enumerate(ordered, start=1))
    if pack["open_questions"]:
        lines.append("## Open questions\n")
        lines.extend(f"- {q['label']} ({', '.join(q['payload']['memory_ids'])})"
                     for q in pack["open_questions"])
    return "\n".join(lines).rstrip() + "\n"


def pack_json_bytes(pack: ContextPack) -> bytes:
    """The canonical serialisation (sorted keys), used to check byte-identical packs."""
    return json.dumps(pack.json, sort_keys=True, ensure_ascii=False).encode()
