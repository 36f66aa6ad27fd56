"""What a posted conversation left behind, as the conversation API answers it.

A capture's record (`ChatImport`, source "api") keeps, for each candidate, what became of it
as it was written (created, reinforced, rejected), its rule and kind, the memory's id and the
message it was taken from: ids and positions, never what was said. The rest is read when
asked, so an answer is always current:

- the title and the quote from the memory itself (redacted and sealed like any memory);
- supersession and review, which the write checks decide once a memory's vector is stored
  (memories.settle): a memory that SUPERSEDES an older one, or was superseded by a newer
  one, is listed under `superseded`; one a near duplicate merged into an older memory,
  under `reinforced`; one a check sent to a curator, under `review`;
- `pending_counts`: memories still waiting for their vector (`embedding`) or for their write
  checks (`checks`). The answer is final when `pending` is false: the job has run and both
  counts are 0.

Each candidate is in exactly one list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from core.actor import Actor
from core.models import Space
from governance import access
from memories.capture import ingest
from memories.capture.conversation import Conversation
from memories.models import (
    ChatImport,
    ChatImportStatus,
    EmbeddingStatus,
    Memory,
    MemoryRelation,
    RelationType,
    ReviewItem,
    ReviewKind,
)


@dataclass
class Texts:
    """What an answer may show of candidates that left no memory to read it from (rejected
    ones), by item: given on the POST answer only, never stored."""

    by_item: dict[int, dict[str, str]] = field(default_factory=dict)


LISTS = ("created", "reinforced", "superseded", "review", "rejected")
# How many exchanges after a candidate's own its quote may come from (a solution's "that worked").
QUOTE_REACH = 3


def stored_report(report: ingest.ChatImportReport, captured: ingest.Captured, conversation: Conversation, *,
                  conversation_id: str) -> dict[str, Any]:
    """What the record keeps: counts, rules, ids, message positions and reasons, never what was
    said (the memories hold that, redacted and sealed)."""
    return {
        **report.as_dict(), "conversation_id": conversation_id or None, "kept": True,
        "messages": len(conversation.messages), "messages_read": messages_read(conversation, captured),
        "skipped": captured.skipped,
        "items": [stored_item(conversation, o) for o in captured.outcomes],
    }


def _exchange_of_each_message(conversation: Conversation) -> list[int]:
    """The exchange each message belongs to, as memories.capture.exchanges.split groups them:
    a user message starts one (and so does the first message, whoever says it)."""
    found, current = [], -1
    for message in conversation.messages:
        if message.role == "user" or current < 0:
            current += 1
        found.append(current)
    return found


def messages_read(conversation: Conversation, captured: ingest.Captured) -> int:
    """How many messages this capture read: none for an unchanged conversation, only those of
    its new exchanges for one that grew."""
    if captured.skipped:
        return 0
    return sum(1 for exchange in _exchange_of_each_message(conversation) if exchange >= captured.start)


def _probes(evidence: str) -> list[str]:
    # A quote may join words of two sentences or messages ("problem … that worked"): each part
    # is looked for whole, then by its start and its end.
    parts = [part.strip() for part in evidence.split(" … ") if part.strip()]
    return [probe for part in parts for probe in (part, part[:40], part[-40:]) if len(probe) >= 4]


def quoted_message(conversation: Conversation, exchange: int, evidence: str) -> int | None:
    """The index of the message a candidate's quote comes from: a user message of its exchange
    (or of the next few) holding the quote; else the exchange's first message."""
    of_exchange = _exchange_of_each_message(conversation)
    nearby = [i for i, e in enumerate(of_exchange) if exchange <= e < exchange + QUOTE_REACH]
    for probe in _probes(evidence):
        for index in nearby:
            message = conversation.messages[index]
            if message.role == "user" and probe in message.text:
                return index
    return nearby[0] if nearby else None


def stored_item(conversation: Conversation, outcome: ingest.Outcome) -> dict[str, Any]:
    candidate = outcome.candidate
    index = quoted_message(conversation, candidate.exchange, candidate.evidence)
    message_id = conversation.messages[index].id if index is not None else ""
    return {"status": outcome.status, "memory_id": outcome.memory_id, "kind": candidate.kind,
            "rule": candidate.rule, "category": candidate.category, "message_index": index,
            "message_id": message_id or None,
            **({"errors": outcome.errors} if outcome.errors else {})}


def _settled(actor: Actor, ids: list[str]) -> dict[str, Any]:
    """What the write checks made of these memories, as `actor` may see it."""
    if not ids:
        return {"relations": [], "reviews": [], "memories": {}, "visible": set()}
    relations = list(MemoryRelation.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids),
                                                   relation_type=RelationType.SUPERSEDES)
                     .values_list("source_id", "target_id"))
    reviews = list(ReviewItem.objects.filter(Q(memory_id__in=ids) | Q(other_id__in=ids),
                                             kind__in=[ReviewKind.CONTRADICTION, ReviewKind.NEAR_DUPLICATE])
                   .order_by("created_at", "id"))
    memories = {m.pk: m for m in access.restrict(Memory.objects.select_related("stats"), actor)
                .filter(pk__in=ids)}
    others = {pk for pair in relations for pk in pair} | {r.memory_id for r in reviews} \
        | {r.other_id for r in reviews if r.other_id} | {m.superseded_by_id for m in memories.values()
                                                         if m.superseded_by_id}
    visible = set(access.restrict(Memory.objects.all(), actor).filter(pk__in=others - set(memories))
                  .values_list("pk", flat=True)) | set(memories)
    return {"relations": relations, "reviews": reviews, "memories": memories, "visible": visible}


def _shown(memory_id: str | None, visible: set[str]) -> str | None:
    # A memory the caller may not read (a tag restricted above their role) is not named.
    return memory_id if memory_id in visible else None


def _texts(memory: Memory | None) -> tuple[str | None, str | None]:
    if memory is None:
        return None, None
    capture = (memory.metadata or {}).get("capture") or {}
    return memory.title, capture.get("evidence")


def _place(item: dict[str, Any], state: dict[str, Any],
           pending: dict[str, int]) -> tuple[str, dict[str, Any]]:
    """Which list a stored item belongs in now, and how it is shown."""
    memories, visible = state["memories"], state["visible"]
    memory = memories.get(item["memory_id"])
    title, quote = _texts(memory)
    shown: dict[str, Any] = {
        "memory_id": _shown(item["memory_id"], visible), "kind": item["kind"], "rule": item["rule"],
        "title": title,
        "evidence": {"quote": quote, "message_index": item["message_index"],
                     "message_id": item["message_id"]},
    }
    if item["status"] == ingest.REJECTED:
        return "rejected", {**shown, "errors": item.get("errors", {})}
    if item["status"] == ingest.REINFORCED or memory is None:
        return "reinforced" if item["status"] == ingest.REINFORCED else "created", {**shown, "pending": False}
    waiting_vector = memory.embedding_status == EmbeddingStatus.PENDING
    waiting_checks = memory.embedding_status != EmbeddingStatus.FAILED and memory.stats.check_pending
    pending["embedding"] += int(waiting_vector)
    pending["checks"] += int(waiting_checks)
    shown["pending"] = waiting_vector or waiting_checks
    for newer, older in state["relations"]:
        if newer == memory.pk:
            return "superseded", {**shown, "supersedes": _shown(older, visible)}
        if older == memory.pk:
            return "superseded", {**shown, "superseded_by": _shown(newer, visible)}
    if memory.superseded_by_id:
        # Superseded without a SUPERSEDES edge: a near duplicate merged into an older memory.
        return "reinforced", {**shown, "memory_id": _shown(memory.superseded_by_id, visible),
                              "merged_from": memory.pk}
    for review in state["reviews"]:
        if memory.pk in (review.memory_id, review.other_id):
            other = review.other_id if review.memory_id == memory.pk else review.memory_id
            sent = {"id": review.pk, "kind": review.kind, "status": review.status}
            return "review", {**shown, "review": sent, "other": _shown(other, visible)}
    return "created", shown


def answer(*, actor: Actor, record: ChatImport, texts: Texts | None = None) -> dict[str, Any]:
    """The conversation API's answer for a capture's record, as things stand now."""
    report = record.report or {}
    items = report.get("items") or []
    ids = [i["memory_id"] for i in items if i.get("memory_id") and i["status"] != ingest.REJECTED]
    state = _settled(actor, ids)
    lists: dict[str, list[dict[str, Any]]] = {name: [] for name in LISTS}
    pending = {"embedding": 0, "checks": 0}
    for index, item in enumerate(items):
        where, shown = _place(item, state, pending)
        if texts is not None and index in texts.by_item:
            shown["title"] = texts.by_item[index]["title"]
            shown["evidence"]["quote"] = texts.by_item[index]["quote"]
        lists[where].append(shown)
    waiting_for_job = record.status in (ChatImportStatus.QUEUED, ChatImportStatus.RUNNING)
    is_pending = waiting_for_job or any(pending.values())
    return {
        "id": record.pk, "space": record.space.slug, "conversation_id": report.get("conversation_id"),
        "status": record.status, "kept": bool(report.get("kept", True)),
        "message": _message(record, report, pending, waiting_for_job), "error": record.error or None,
        "messages": report.get("messages", 0), "messages_read": report.get("messages_read", 0),
        "skipped": bool(report.get("skipped", False)), **lists,
        "would_keep": int(report.get("would_keep", 0)),
        "pending": is_pending, "pending_counts": pending,
        "created_at": record.created_at, "finished_at": record.finished_at,
    }


def _message(record: ChatImport, report: dict[str, Any], pending: dict[str, int],
             waiting_for_job: bool) -> str:
    if waiting_for_job:
        return (f"Queued: a job captures the conversation. GET /api/v1/conversations/{record.pk}/ answers "
                "what was remembered; it is final when `pending` is false.")
    if record.status == ChatImportStatus.FAILED:
        return "The capture failed: nothing of it was kept."
    if not report.get("kept", True):
        return "Nothing was kept: the memory mode was incognito when the job ran."
    if report.get("skipped"):
        return "Nothing new: this conversation was captured before, as it is now."
    if any(pending.values()):
        return (f"Captured. {pending['embedding']} memories wait for their embedding and "
                f"{pending['checks']} for their write checks: supersession and review are known once "
                "`pending` is false.")
    return "Captured; this answer is final."


def incognito_answer(*, space: Space, posted_id: str, would_keep: int, messages: int,
                     messages_read: int) -> dict[str, Any]:
    """Incognito: what would have been kept, counted; nothing kept, nothing to ask about later."""
    return {
        "id": None, "space": space.slug, "conversation_id": posted_id or None,
        "status": ChatImportStatus.DONE, "kept": False,
        "message": f"Incognito: nothing was kept (no memory, no watermark, no record). {would_keep} memories "
                   "would have been kept.",
        "error": None, "messages": messages, "messages_read": messages_read, "skipped": False,
        **{name: [] for name in LISTS}, "would_keep": would_keep, "pending": False,
        "pending_counts": {"embedding": 0, "checks": 0}, "created_at": None, "finished_at": None,
    }
