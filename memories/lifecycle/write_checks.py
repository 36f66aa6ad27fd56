"""What a new memory is to those its space holds: near duplicates and supersession.

An exact duplicate is caught as the memory is written (memories.services reinforces the
stored one). The rest needs the new memory's vector, which the embedding job stores a
moment after the write commits, so the check finishes there: once embedded (memories.settle),
each memory marked `check_pending` is compared with its nearest older neighbours in its
space and memories.lifecycle.dedupe judges each pair. Then, as the space's policies say:

- duplicate: merge the new memory into the older one, link them (SIMILAR_TO), or ask a
  curator (a `near_duplicate` review item);
- contradiction: the newer statement supersedes the older one (archived, restorable,
  linked by SUPERSEDES), or a curator decides (a `contradiction` review item) when the
  rules are not sure, when the older memory is confirmed or pinned, or when the policy
  says always to ask.

An uncertain verdict goes to the model judge first when one is configured
(memories.lifecycle.judge). Until its vector is stored a memory is simply not checked yet: recall
serves it as written, and the nightly job finishes checks the embedding job missed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import connection, transaction

from core.actor import Actor
from governance import policy
from governance.access import SYSTEM
from governance.audit.services import audit_record
from governance.modes import WriteOutcome
from memories.lifecycle import curation, dedupe, judge
from memories.models import (
    EmbeddingStatus,
    Memory,
    MemoryRelation,
    MemoryStats,
    RelationType,
    ReviewItem,
    ReviewKind,
    ReviewStatus,
)

logger = logging.getLogger(__name__)

# Neighbours compared with each new memory, and the least cosine worth judging.
NEIGHBOURS = 5
MIN_COSINE = 0.45
# Spaces up to this size are compared exactly, larger ones through the HNSW index.
EXACT_UP_TO = 20_000
# Checks finished per call when no ids are given (the nightly catch-up).
CATCH_UP_LIMIT = 2000


@dataclass
class CheckReport:
    checked: int = 0
    merged: list[dict[str, str]] = field(default_factory=list)
    linked: list[dict[str, str]] = field(default_factory=list)
    superseded: list[dict[str, str]] = field(default_factory=list)
    reviewed: list[dict[str, str]] = field(default_factory=list)
    # Memories left pending: their space refuses writes now, or their vector is not stored.
    waiting: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"checked": self.checked, "merged": self.merged, "linked": self.linked,
                "superseded": self.superseded, "reviewed": self.reviewed, "waiting": self.waiting}


def finish(memory_ids: list[str] | None = None, *, limit: int = CATCH_UP_LIMIT) -> CheckReport:
    """Finish the pending checks of `memory_ids` (or of any memory, up to `limit`)."""
    report = CheckReport()
    pending = MemoryStats.objects.filter(check_pending=True)
    if memory_ids is not None:
        pending = pending.filter(memory_id__in=memory_ids)
    ids = list(pending.order_by("memory_id").values_list("memory_id", flat=True)[:limit])
    memories = (Memory.objects.filter(pk__in=ids).select_related("space", "stats")
                .order_by("created_at", "id"))
    # Per space, once a call: whether it takes writes now, and whether it is small enough to
    # compare exactly.
    writable: dict[int, bool] = {}
    exact: dict[int, bool] = {}
    for memory in memories:
        if memory.archived:
            _done(memory)
            continue
        if memory.space_id not in writable:
            writable[memory.space_id] = policy.policy(SYSTEM, memory.space).write is WriteOutcome.STORE
        if memory.embedding_status != EmbeddingStatus.READY or not writable[memory.space_id]:
            report.waiting += 1
            continue
        if memory.space_id not in exact:
            exact[memory.space_id] = _small(memory.space_id)
        try:
            # Judged outside any transaction (the model judge may take seconds); acted on in one.
            found = _relation(memory, exact=exact[memory.space_id])
            with transaction.atomic():
                # Claimed, so a job and the nightly catch-up on another worker act once.
                claimed = MemoryStats.objects.select_for_update(skip_locked=True) \
                    .filter(memory=memory, check_pending=True).values_list("memory_id", flat=True).first()
                if claimed is None:
                    continue
                if found is not None:
                    _act(*found, report)
                _done(memory)
        except Exception:
            # Left pending for the nightly catch-up; the others go on.
            logger.exception("write check of memory %s failed", memory.pk)
            report.waiting += 1
            continue
        report.checked += 1
    return report


def after_settled(memory_ids: list[str]) -> None:
    """memories.settle: finish the checks of memories whose vectors were just stored."""
    report = finish(memory_ids)
    if report.superseded or report.merged or report.reviewed:
        logger.info("write checks: %d superseded, %d merged, %d linked, %d to review",
                    len(report.superseded), len(report.merged), len(report.linked), len(report.reviewed))


def _done(memory: Memory) -> None:
    MemoryStats.objects.filter(memory=memory).update(check_pending=False)


def _small(space_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM (SELECT 1 FROM memories_memory WHERE space_id = %s "
                       "AND archived = false LIMIT %s) AS rows", [space_id, EXACT_UP_TO + 1])
        return cursor.fetchone()[0] <= EXACT_UP_TO


def neighbours(memory: Memory, *, exact: bool) -> list[tuple[str, float]]:
    """The nearest active memories of the space written before `memory`, with cosines.

    `exact` (a space of up to EXACT_UP_TO memories) compares them all ("+ 0" keeps the
    planner off the HNSW index: a few ms); otherwise the index is scanned, on past hits the
    filters drop (pgvector's iterative scan, set for this transaction only).
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT embedding::text, embedding_model, created_at FROM memories_memory WHERE id = %s",
            [memory.pk],
        )
        row = cursor.fetchone()
        if row is None or row[0] is None:
            return []
        vector, model, created_at = row
        if not exact:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        order = "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"
        cursor.execute(
            "SELECT id, 1 - (embedding <=> %s::vector) FROM memories_memory "
            "WHERE space_id = %s AND archived = false AND embedding IS NOT NULL AND embedding_model = %s "
            f"AND id <> %s AND (created_at, id) < (%s, %s) ORDER BY {order} LIMIT %s",
            [vector, memory.space_id, model, memory.pk, created_at, memory.pk, vector, NEIGHBOURS],
        )
        return [(pk, float(cosine)) for pk, cosine in cursor.fetchall() if cosine >= MIN_COSINE]


def _statement_time(memory: Memory):
    return (memory.occurred_at or memory.created_at, memory.created_at, memory.pk)


def _relation(memory: Memory, *, exact: bool) -> tuple[Memory, Memory, dedupe.Verdict, float] | None:
    """(older, newer, verdict, cosine) for the nearest neighbour that is not distinct, if any."""
    found = neighbours(memory, exact=exact)
    others = Memory.objects.filter(pk__in=[pk for pk, _ in found]).select_related("space", "stats")
    by_id = {m.pk: m for m in others}
    for other_id, cosine in found:
        other = by_id.get(other_id)
        if other is None:
            continue
        # Which statement is newer is when it was said (occurred_at), not when it was stored:
        # an import of an old conversation does not overrule what was learnt since.
        older, newer = sorted((other, memory), key=_statement_time)
        verdict = dedupe.judge(older.content, newer.content, cosine=cosine)
        settled = verdict.relation == "duplicate" or (verdict.certain and verdict.relation == "contradiction")
        if not settled and older.kind == newer.kind in dedupe.REPLACEABLE_KINDS:
            # A decision that says it replaces one about the same subject ("switching the
            # index to BRIN"): the words of judge() may share too little to see it.
            verdict = dedupe.replaced(older.content, newer.content, cosine=cosine) or verdict
        if verdict.relation != "distinct" and not verdict.certain:
            verdict = judge.second_opinion(older.content, newer.content, verdict)
        if verdict.relation != "distinct":
            # One relation per new memory: the nearest that says something.
            return older, newer, verdict, cosine
    return None


def _evidence(verdict: dedupe.Verdict, cosine: float) -> dict[str, object]:
    return {"rule": verdict.rule, "certain": verdict.certain, "cosine": round(cosine, 4), **verdict.features}


def _pair(older: Memory, newer: Memory) -> dict[str, str]:
    return {"older": older.pk, "newer": newer.pk}


def _act(older: Memory, newer: Memory, verdict: dedupe.Verdict, cosine: float, report: CheckReport) -> None:
    space = older.space
    evidence = _evidence(verdict, cosine)
    if verdict.relation == "duplicate":
        rule = space.near_duplicate_policy
        if rule == "keep":
            return
        if rule == "merge" and verdict.certain:
            curation.memory_merge(actor=SYSTEM, target_id=older.pk, source_ids=[newer.pk],
                                  expected_version=older.version,
                                  reason=f"near duplicate written ({verdict.rule}, cosine {cosine:.2f})")
            report.merged.append(_pair(older, newer))
        elif rule == "link" and verdict.certain:
            relate(newer, older, RelationType.SIMILAR_TO, strength=cosine,
                   provenance={"by": "write check", **evidence})
            report.linked.append(_pair(older, newer))
        else:
            _review(ReviewKind.NEAR_DUPLICATE, older, newer, evidence,
                    reason=f"near duplicate: {verdict.rule}, cosine {cosine:.3f}")
            report.reviewed.append(_pair(older, newer))
        return
    rule = space.supersession_policy
    if rule == "off":
        return
    # A person said the older memory holds (confirmed) or pinned it (core): a machine does
    # not overrule that; a curator does.
    protected = older.reliability == "confirmed" or older.priority == "core"
    if rule == "auto" and verdict.certain and not protected:
        # The reason names no memory: readers of the older one may not see the newer.
        curation.supersede(SYSTEM, older, by=newer.pk,
                           reason=f"superseded by a newer statement ({verdict.rule})")
        relate(newer, older, RelationType.SUPERSEDES, strength=1.0,
               provenance={"by": "write check", **evidence})
        report.superseded.append(_pair(older, newer))
    else:
        why = "protected" if protected and verdict.certain else verdict.rule
        _review(ReviewKind.CONTRADICTION, older, newer, evidence,
                reason=f"may contradict: {why}, cosine {cosine:.3f}")
        report.reviewed.append(_pair(older, newer))


def _review(kind: ReviewKind, older: Memory, newer: Memory, evidence: dict[str, object], *,
            reason: str) -> None:
    pair = ReviewItem.objects.filter(kind=kind, memory=older, other=newer)
    if pair.exclude(status=ReviewStatus.OPEN).exists():
        return  # a curator settled this pair already
    ReviewItem.objects.bulk_create([ReviewItem(
        space_id=older.space_id, memory=older, other=newer, kind=kind, reason=reason[:300], evidence=evidence,
    )], ignore_conflicts=True)


def relate(source: Memory, target: Memory, relation_type: RelationType, *, strength: float,
           provenance: dict[str, object], actor: Actor = SYSTEM) -> MemoryRelation:
    """Record (or refresh) a typed edge between two memories of one space; audited."""
    relation, _ = MemoryRelation.objects.update_or_create(
        source=source, target=target, relation_type=relation_type,
        defaults={"space_id": source.space_id, "strength": round(min(1.0, max(0.0, strength)), 4),
                  "provenance": provenance},
    )
    audit_record("edit", actor=actor, space=source.space, target=source,
                 after={"relation": relation_type.value, "target": target.pk, "strength": relation.strength},
                 note=f"{relation_type.value} {target.pk}")
    return relation
