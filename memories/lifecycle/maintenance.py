"""The memory lifecycle jobs: the decay pass, archive suggestions, pruning and statistics
(docs/lifecycle.md).

The decay pass updates MemoryStats only, a narrow table without vectors, in batches of
memory ids, each its own short transaction, so recall keeps reading while it runs. It
computes memories.lifecycle.decay's formula in SQL (a test holds the two to agree) from the time of
the memory's last pass, so running it twice, or late, neither doubles nor skips a day.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Avg, Count, F, FloatField, Q, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from core.models import Space
from governance import policy
from governance.access import SYSTEM
from governance.modes import WriteOutcome
from memories import services
from memories.lifecycle import curation, decay
from memories.models import Memory, MemoryStats, ReviewItem, ReviewKind, ReviewStatus

logger = logging.getLogger(__name__)

BATCH = 5000
# After each batch the pass sleeps this many times as long as the batch took.
YIELD_SHARE = 2.0

# memories.lifecycle.decay.daily_loss, in SQL. Parameters: %(recent)s, the start of the recent-access
# window. The half-life comes from the policy (validated on write: a whole number of days).
LOSS_SQL = f"""
CASE WHEN m.priority = '{decay.PINNED_PRIORITY}'
          OR COALESCE(m.decay_policy->>'type', 'exponential') <> 'exponential' THEN 0.0
ELSE (1.0 - (CASE m.memory_type WHEN 'episodic' THEN {decay.TYPE_DAILY_RATE["episodic"]}
                                WHEN 'procedural' THEN {decay.TYPE_DAILY_RATE["procedural"]}
                                ELSE {decay.DEFAULT_TYPE_RATE} END)
             * power(0.5, 1.0 / COALESCE(NULLIF((m.decay_policy->>'half_life_days')::float8, 0),
                                         {decay.DEFAULT_HALF_LIFE_DAYS})))
     * (1.0 - {decay.IMPORTANCE_SLOWDOWN} * LEAST(GREATEST(m.importance, 0.0), 1.0))
     / (1.0 + ln(1.0 + GREATEST(s.usage_count, 0)))
     * CASE WHEN s.last_accessed_at >= %(recent)s THEN {decay.RECENT_ACCESS_FACTOR} ELSE 1.0 END
     * CASE WHEN m.reliability = 'confirmed' THEN {decay.CONFIRMED_FACTOR} ELSE 1.0 END
END"""

# Days of decay a memory owes at %(now)s: since its last pass, or its last update before one.
DAYS_SQL = ("GREATEST(0.0, EXTRACT(EPOCH FROM (%(now)s - COALESCE(s.decayed_at, m.updated_at)))"
            f" / {decay.DAY})")

DECAY_SQL = f"""
WITH batch AS (
    SELECT s.memory_id,
           ({LOSS_SQL}) AS loss,
           {DAYS_SQL} AS days
    FROM memories_memorystats s JOIN memories_memory m ON m.id = s.memory_id
    WHERE m.archived = false AND m.id > %(after)s {{space_filter}}
    ORDER BY m.id
    LIMIT %(batch)s
)
UPDATE memories_memorystats s
SET confidence = GREATEST(0.0, s.confidence * power(1.0 - batch.loss, batch.days)),
    decayed_at = %(now)s
FROM batch
WHERE s.memory_id = batch.memory_id
RETURNING s.memory_id
"""


@dataclass
class DecayReport:
    memories: int = 0
    batches: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    # Mean confidence of the memories the pass looked at, before and after (dry runs: after
    # is what the pass would write).
    mean_before: float | None = None
    mean_after: float | None = None


def decay_pass(
    *,
    now: datetime | None = None,
    space_ids: list[int] | None = None,
    dry_run: bool = False,
    batch: int = BATCH,
    yield_share: float = YIELD_SHARE,
) -> DecayReport:
    """Bring every active memory's stored confidence up to `now`, `batch` memories per
    transaction, resting `yield_share` × each batch's time after it (0 in tests)."""
    now = now or timezone.now()
    report = DecayReport(dry_run=dry_run)
    started = timezone.now()
    if dry_run:
        report.mean_before, report.mean_after, report.memories = _decay_preview(now, space_ids)
        report.seconds = round((timezone.now() - started).total_seconds(), 3)
        return report
    report.mean_before = _mean_confidence(space_ids)
    space_filter = "AND m.space_id = ANY(%(spaces)s)" if space_ids is not None else ""
    sql = DECAY_SQL.format(space_filter=space_filter)
    after = ""
    while True:
        began = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                sql,
                {
                    "now": now,
                    "recent": now - timedelta(days=decay.RECENT_ACCESS_DAYS),
                    "after": after,
                    "batch": batch,
                    "spaces": space_ids or [],
                },
            )
            ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            break
        report.memories += len(ids)
        report.batches += 1
        after = max(ids)
        # Rest as long as the batch took: the pass uses at most half of one core, so recalls
        # running meanwhile (on the same few cores) are not queued behind it.
        time.sleep((time.perf_counter() - began) * yield_share)
    report.mean_after = _mean_confidence(space_ids)
    report.seconds = round((timezone.now() - started).total_seconds(), 3)
    logger.info(
        "decay pass: %d memories in %d batches, %.2f s", report.memories, report.batches, report.seconds
    )
    return report


def _mean_confidence(space_ids: list[int] | None) -> float | None:
    rows = MemoryStats.objects.filter(memory__archived=False)
    if space_ids is not None:
        rows = rows.filter(memory__space_id__in=space_ids)
    mean = rows.aggregate(mean=Avg("confidence"))["mean"]
    return round(mean, 4) if mean is not None else None


def _decay_preview(now: datetime, space_ids: list[int] | None) -> tuple[float | None, float | None, int]:
    space_filter = "AND m.space_id = ANY(%(spaces)s)" if space_ids is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT count(*), avg(s.confidence),
                   avg(GREATEST(0.0, s.confidence * power(1.0 - ({LOSS_SQL}), {DAYS_SQL})))
            FROM memories_memorystats s JOIN memories_memory m ON m.id = s.memory_id
            WHERE m.archived = false {space_filter}
        """,
            {"now": now, "recent": now - timedelta(days=decay.RECENT_ACCESS_DAYS), "spaces": space_ids or []},
        )
        count, before, after = cursor.fetchone()
    return (
        round(before, 4) if before is not None else None,
        round(after, 4) if after is not None else None,
        count,
    )


# --- archive suggestions --------------------------------------------------------------


def archive_suggestions(*, space_ids: list[int] | None = None, dry_run: bool = False) -> list[dict[str, Any]]:
    """Open a review item for each active memory whose confidence fell below its policy's
    `min_confidence` (0.4 unless the policy says), unless one is open already. Nothing is
    archived: a curator decides (docs/lifecycle.md, "The review queue")."""
    floor = Coalesce(
        Cast(KeyTextTransform("min_confidence", "memory__decay_policy"), FloatField()),
        Value(decay.DEFAULT_MIN_CONFIDENCE),
    )
    below = (
        MemoryStats.objects.filter(memory__archived=False)
        .alias(floor=floor)
        .filter(confidence__lt=F("floor"))
        .exclude(
            memory__review_items__kind=ReviewKind.ARCHIVE_SUGGESTION,
            memory__review_items__status=ReviewStatus.OPEN,
        )
    )
    if space_ids is not None:
        below = below.filter(memory__space_id__in=space_ids)
    found = [
        {
            "memory": memory_id,
            "space_id": space_id,
            "confidence": round(confidence, 4),
            "min_confidence": round(minimum, 4),
        }
        for memory_id, space_id, confidence, minimum in below.annotate(minimum=floor)
        .values_list("memory_id", "memory__space_id", "confidence", "minimum")
        .order_by("memory_id")
    ]
    if not dry_run:
        ReviewItem.objects.bulk_create(
            [
                ReviewItem(
                    space_id=f["space_id"],
                    memory_id=f["memory"],
                    kind=ReviewKind.ARCHIVE_SUGGESTION,
                    reason=f"confidence {f['confidence']:.2f} fell below its minimum "
                    f"{f['min_confidence']:.2f}",
                    evidence={"confidence": f["confidence"], "min_confidence": f["min_confidence"]},
                )
                for f in found
            ],
            ignore_conflicts=True,
        )
    return found


# --- pruning --------------------------------------------------------------------------


@dataclass
class PruneReport:
    dry_run: bool
    pruned: list[str] = field(default_factory=list)
    # Spaces left alone: their policy does not opt in, or their mode refuses writes now.
    skipped_spaces: dict[str, str] = field(default_factory=dict)


def prune(*, dry_run: bool = False, space_ids: list[int] | None = None) -> PruneReport:
    """Delete active memories below the prune floor (0.1), in spaces whose policy opts in
    (`prune_decayed`) and whose mode allows writes. Pinned (core) and confirmed memories are
    never pruned. Each deletion goes through memories.services (a `delete` audit row each,
    versions and grants with it)."""
    report = PruneReport(dry_run=dry_run)
    spaces = Space.objects.all() if space_ids is None else Space.objects.filter(pk__in=space_ids)
    for space in spaces.order_by("pk"):
        if not space.prune_decayed:
            report.skipped_spaces[space.slug] = "policy does not opt in"
            continue
        if policy.policy(SYSTEM, space).write is not WriteOutcome.STORE:
            report.skipped_spaces[space.slug] = f"mode is {space.mode}"
            continue
        doomed = list(
            Memory.objects.filter(space=space, archived=False, stats__confidence__lt=decay.PRUNE_FLOOR)
            .exclude(priority=decay.PINNED_PRIORITY)
            .exclude(reliability="confirmed")
            .order_by("id")
            .values_list("id", flat=True)
        )
        if not doomed:
            continue
        report.pruned += doomed
        if dry_run:
            continue
        for memory_id in doomed:
            services.memory_delete(actor=SYSTEM, memory_id=memory_id)
        logger.info("pruned %d memories of space %s below %.2f", len(doomed), space.slug, decay.PRUNE_FLOOR)
    return report


# --- statistics -----------------------------------------------------------------------


def statistics() -> dict[str, Any]:
    """What the lifecycle looks like now, per memory type: counts, mean confidence, how many
    are below their archive floor or the prune floor, and the open review items."""
    active = MemoryStats.objects.filter(memory__archived=False)
    by_type = {
        row["memory__memory_type"]: {
            "memories": row["n"],
            "mean_confidence": round(row["mean"] or 0, 4),
            "below_prune_floor": row["pruneable"],
        }
        for row in active.values("memory__memory_type").annotate(
            n=Count("memory_id"),
            mean=Avg("confidence"),
            pruneable=Count("memory_id", filter=Q(confidence__lt=decay.PRUNE_FLOOR)),
        )
    }
    never = active.filter(decayed_at__isnull=True).count()
    review = dict(
        ReviewItem.objects.filter(status=ReviewStatus.OPEN).values_list("kind").annotate(n=Count("id"))
    )
    return {
        "by_type": dict(sorted(by_type.items())),
        "never_decayed": never,
        "open_review_items": review,
        "archived": Memory.objects.filter(archived=True).count(),
    }


# --- duplicates -----------------------------------------------------------------------

# Two memories whose embeddings are at least this similar say the same thing in other words.
NEAR_DUPLICATE_COSINE = 0.95
# How far back the nightly job looks for new memories to compare (it runs every night; two
# days leave room for a missed night).
NEAR_DUPLICATE_WINDOW = timedelta(days=2)


@dataclass
class DuplicateReport:
    dry_run: bool
    # Exact duplicates merged: {kept memory id: [merged ids]}.
    merged: dict[str, list[str]] = field(default_factory=dict)
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)
    skipped_spaces: dict[str, str] = field(default_factory=dict)


def consolidate_duplicates(
    *, dry_run: bool = False, since: datetime | None = None, space_ids: list[int] | None = None
) -> DuplicateReport:
    """Merge exact duplicates and queue near duplicates for review.

    - Exact duplicates (the same content, by its keyed hash, in one space, both active) are
      merged into the oldest (memories.lifecycle.curation.memory_merge: one memory with the union of
      phrases and tags, counters added up; the others superseded and archived, restorable).
    - Near duplicates (cosine ≥ 0.95 between embeddings of the same model, in one space)
      among memories created or changed since `since` (default: two days ago) become
      `near_duplicate` review items for a curator, once per pair: a dismissed pair is not
      raised again. A memory whose embedding is not ready yet is compared on a later night.

    Spaces whose memory mode refuses writes now are left alone.
    """
    report = DuplicateReport(dry_run=dry_run)
    spaces = Space.objects.all() if space_ids is None else Space.objects.filter(pk__in=space_ids)
    writable = []
    for space in spaces:
        if policy.policy(SYSTEM, space).write is WriteOutcome.STORE:
            writable.append(space.pk)
        else:
            report.skipped_spaces[space.slug] = f"mode is {space.mode}"
    active = Memory.objects.filter(archived=False, space_id__in=writable)
    groups = (
        active.values("space_id", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .order_by("space_id", "content_hash")
    )
    for group in groups:
        same = list(
            active.filter(space_id=group["space_id"], content_hash=group["content_hash"]).order_by(
                "created_at", "id"
            )
        )
        kept, others = same[0], [m.id for m in same[1:]]
        report.merged[kept.id] = others
        if not dry_run:
            curation.memory_merge(
                actor=SYSTEM,
                target_id=kept.id,
                source_ids=others,
                expected_version=kept.version,
                reason="exact duplicate (nightly consolidation)",
            )
    report.near_duplicates = _near_duplicates(
        active, since or timezone.now() - NEAR_DUPLICATE_WINDOW, dry_run=dry_run
    )
    return report


def _near_duplicates(active: Any, since: datetime, *, dry_run: bool) -> list[dict[str, Any]]:
    recent = list(
        active.filter(updated_at__gte=since, embedding__isnull=False)
        .order_by("id")
        .values_list("id", flat=True)
    )
    pairs: dict[tuple[str, str], float] = {}
    with connection.cursor() as cursor:
        for memory_id in recent:
            cursor.execute(
                "SELECT o.id, 1 - (o.embedding <=> m.embedding) FROM memories_memory m "
                "JOIN memories_memory o ON o.space_id = m.space_id AND o.id <> m.id "
                "AND o.archived = false AND o.embedding IS NOT NULL "
                "AND o.embedding_model = m.embedding_model "
                "WHERE m.id = %s ORDER BY o.embedding <=> m.embedding LIMIT 1",
                [memory_id],
            )
            row = cursor.fetchone()
            if row and row[1] >= NEAR_DUPLICATE_COSINE:
                pair = tuple(sorted((memory_id, row[0])))
                pairs[(pair[0], pair[1])] = round(float(row[1]), 4)
    found = []
    for (first, second), cosine in sorted(pairs.items()):
        older, newer = sorted(
            Memory.objects.filter(pk__in=[first, second]), key=lambda m: (m.created_at, m.id)
        )
        if ReviewItem.objects.filter(kind=ReviewKind.NEAR_DUPLICATE, memory=older, other=newer).exists():
            continue  # raised before (open, or resolved or dismissed by a curator)
        found.append({"memory": older.id, "other": newer.id, "cosine": cosine})
        if not dry_run:
            # A run started by hand while the scheduled one runs may raise the same pair:
            # the one-open-item constraint keeps it once.
            ReviewItem.objects.bulk_create([ReviewItem(
                space_id=older.space_id, memory=older, other=newer, kind=ReviewKind.NEAR_DUPLICATE,
                reason=f"near duplicate: cosine {cosine:.3f}", evidence={"cosine": cosine},
            )], ignore_conflicts=True)
    return found


# --- micro-training -------------------------------------------------------------------

def queue_training_failures(failing: dict[str, float]) -> int:
    """Open a `training_failure` review item for each memory ({id: pass rate}) whose examples
    failed in its last run, unless one is open already. Returns how many were opened."""
    memories = Memory.objects.filter(pk__in=list(failing), archived=False)
    items = [ReviewItem(space_id=m.space_id, memory=m, kind=ReviewKind.TRAINING_FAILURE,
                        reason=f"training examples pass rate {failing[m.id]:.2f}",
                        evidence={"pass_rate": failing[m.id]}) for m in memories]
    return len(ReviewItem.objects.bulk_create(items, ignore_conflicts=True))


def refresh_planner_statistics() -> None:
    """ANALYZE the memory tables, so Postgres plans recall on their current shape."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
        cursor.execute("ANALYZE memories_memorystats")
