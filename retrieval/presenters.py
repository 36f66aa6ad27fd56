"""How what recall returns is shown: the JSON shapes of a recalled memory, in one place.

A recalled memory (pipeline.RankedItem) is shown in several answers: the recall envelope
(REST, and through it the MCP tools, which also have a short form for tight budgets), a
context pack's items and critical facts, the recall event that keeps why each memory came
back, the recall inspector in the admin, and the notes of a prompt augmentation. Each
shape is a function here, so the rules they share (scores to 4 places, signals as a dict,
provenance as {type, ref, uri}) cannot drift apart. Key order is part of each shape:
clients read the answers as written, and identical inputs give byte-identical packs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from retrieval.pipeline import RankedItem, RecallResult

if TYPE_CHECKING:
    from retrieval.augment import Note

# The short form of a ranked memory when the whole one does not fit an MCP answer's
# budget: what it says, and where to find the rest.
SHORT_MEMORY_KEYS = ("id", "space", "title", "summary", "kind", "defused")


def score(value: float) -> float:
    """A score as every answer shows it."""
    return round(value, 4)


def source(row: Mapping[str, Any]) -> dict[str, Any]:
    """Where a memory came from: {type, ref, uri}."""
    return {"type": row["source_type"], "ref": row["source_ref"], "uri": row["source_uri"]}


def ranked_memory(item: RankedItem) -> dict[str, Any]:
    """One entry of the recall answer's `ranked_memory_list` (RankedMemorySerializer)."""
    row = item.row
    return {
        "id": item.id, "space": row["space_slug"], "title": row["title"], "summary": row["summary"],
        "kind": row["kind"], "memory_type": row["memory_type"], "score": score(item.score),
        "signals": item.signals.as_dict(), "rationale": item.rationale, "highlights": item.highlights,
        "conflict": item.conflict, "source": source(row), "version": row["version"], "tokens": item.tokens,
    }


def short_memory(memory: Mapping[str, Any]) -> dict[str, Any]:
    """The short form of a `ranked_memory` entry (as the API answered it)."""
    return {k: memory[k] for k in SHORT_MEMORY_KEYS if k in memory}


def recall_envelope(result: RecallResult, *, redaction_report: list | None = None) -> dict[str, Any]:
    """The recall answer (RecallOutputSerializer): the ranked memories, a headline for a UI,
    what was redacted from the query before the recall event kept it, and how it ran."""
    items = [ranked_memory(item) for item in result.items]
    if items:
        headline = f"{len(items)} memor{'y' if len(items) == 1 else 'ies'} recalled"
    else:
        headline = "Nothing relevant is stored yet"
    return {
        "action": "recall",
        "ok": True,
        "ui_summary": {"headline": headline,
                       "items": [f"{i['title']}: {i['rationale']}" for i in items]},
        # What was redacted from the query before the recall event stored it.
        "redaction_report": redaction_report or [],
        "data": {
            "ranked_memory_list": items,
            "suggested_follow_up_actions": result.follow_ups,
            "query_text": result.query_text,
            "profile": result.profile.name,
            "spaces": result.spaces,
            "candidates": result.candidates,
            "trimmed": result.trimmed,
            "cached": result.cached,
            "tracked": result.track,
            "silenced_spaces": result.silenced,
            "timings_ms": result.timings_ms,
            "category_summaries": result.category_summaries,
        },
    }


def recall_trace(item: RankedItem) -> dict[str, Any]:
    """Why a memory came back, as a tracked recall's RecallEvent keeps it."""
    return {"id": item.id, "score": score(item.score), "signals": item.signals.as_dict(),
            "rationale": item.rationale}


def inspected_rank(item: RankedItem, *, memory_id: str) -> dict[str, Any]:
    """One line of the admin's recall inspector: where recall ranks what, marking the
    memory inspected."""
    return {"id": item.id, "title": item.row["title"], "score": score(item.score),
            "is_this": item.id == memory_id}


def pack_item(item: RankedItem, *, position: int, rank: int, content: str, tokens: int,
              card: dict[str, Any] | None, defused: list[str] | None = None) -> dict[str, Any]:
    """One item of a context pack's JSON: `position` in the pack's order, `rank` by score,
    `content` as the pack shows it, `tokens` of its Markdown, what was neutralised in its
    text (`defused`, governance.defuse.KINDS), and its card's validation when the memory is
    a memory card."""
    row = item.row
    return {
        "position": position,
        "rank": rank,
        "id": item.id,
        "title": row["title"],
        "summary": row["summary"],
        "content": content,
        "kind": row["kind"],
        "memory_type": row["memory_type"],
        "score": score(item.score),
        "signals": item.signals.as_dict(),
        "inclusion_reason": item.rationale,
        "conflict": item.conflict,
        "provenance": {"id": item.id, "space": row["space_slug"], "version": row["version"],
                       "source": source(row)},
        "tokens": tokens,
        "defused": defused or [],
        **({"card": card} if card is not None else {}),
    }


def critical_fact(item: RankedItem) -> dict[str, Any]:
    """One of a context pack's critical facts."""
    return {"id": item.id, "title": item.row["title"], "fact": item.row["summary"],
            "priority": item.row["priority"]}


def augmentation_note(note: Note) -> dict[str, Any]:
    """One note of a prompt augmentation (AugmentationNoteSerializer)."""
    return {"id": note.id, "kind": note.kind, "category": note.category, "priority": note.priority,
            "reason": note.reason, "score": score(note.score), "neutralised": note.neutralised,
            "defused": note.defused}
