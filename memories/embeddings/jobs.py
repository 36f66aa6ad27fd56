"""Embedding memories: the job queued when memories are written, the retries of a failed
batch, the drain of a backlog whose jobs were lost, and re-embedding after a model change.

Runs in the django-q2 workers (memories.tasks), outside any transaction: the model call
may take seconds.
"""

from __future__ import annotations

import ast
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_q.models import Schedule

from core.jobs import Pacer, enqueue, enqueue_on_commit, job_budget_seconds, schedule_retry
from core.models import Space
from core.signals import spaces_changed
from memories import entry
from memories.embeddings import passages

# Looked up through the module at call time, so a test can swap the provider.
from memories.embeddings import registry as embeddings
from memories.embeddings.base import EmbeddingError, EmbeddingProvider
from memories.models import EmbeddingStatus, Memory, MemoryPassage

logger = logging.getLogger(__name__)


# Seconds before the cluster gives up on an embedding job and frees its worker (and, with
# its connection, the job's row locks): sooner than the cluster-wide timeout.
EMBED_TASK_TIMEOUT = 120


def embed_task_timeout() -> int:
    """The timeout of an embedding job: EMBED_TASK_TIMEOUT, or the cluster's if shorter."""
    return min(EMBED_TASK_TIMEOUT, int(settings.Q_CLUSTER["timeout"]))


def embed_pacer(*, budget_seconds: float | None = None, most: int | None = None) -> Pacer:
    """Batches of an embedding job: sized to commit every few seconds, within its budget.

    The first batch is a sixteenth of a model batch (its rate is not known yet); later ones
    grow or shrink with the measured rate, up to eight model batches.
    """
    size = max(1, int(settings.SAM_EMBEDDING["BATCH_SIZE"]))
    budget = job_budget_seconds(embed_task_timeout()) if budget_seconds is None else budget_seconds
    return Pacer(budget_seconds=budget, first=max(1, size // 16), most=most or size * 8)


def enqueue_embedding(memory_ids: list[str], *, attempt: int = 1, on_commit: bool = True) -> None:
    """Embed after commit: the worker must see the rows, and a rollback must not embed.

    `on_commit=False` queues at once: for a job handing the rest of its list to a follow-up.
    """
    if not memory_ids:
        return

    ids = list(memory_ids)
    queue = enqueue_on_commit if on_commit else enqueue
    queue("memories.tasks.memory_embed", memory_ids=ids, attempt=attempt,
          task_name=f"embed {len(ids)} memories", group="embedding", timeout=embed_task_timeout())


@dataclass
class EmbedOutcome:
    embedded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    retry_scheduled: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    # Not reached before the time budget ran out: the caller queues a follow-up for them.
    left: list[str] = field(default_factory=list)
    retry_at: datetime | None = None


# Session-level advisory locks mark the memories a job is embedding. They live as long as
# the job's database connection, so a worker killed mid-batch (or a connection the server
# dropped) releases them at once: nothing has to expire or be reset. Rows are keyed by
# hashtext(id); a collision only makes one job skip a row the other is not embedding, and
# the backlog drain takes it on a later pass.
EMBED_LOCK_CLASS = 0x53414D  # "SAM"
DRAIN_SLOT_LOCK_CLASS = 0x53414E


def _lock_rows(ids: list[str]) -> list[str]:
    """Try to lock each id for this connection; returns the ids locked (others are held)."""
    if not ids:
        return []
    with connection.cursor() as cursor:
        # Over an explicit array, so the function runs on exactly these ids (a LIMIT
        # beside pg_try_advisory_lock may lock rows it does not return).
        cursor.execute(
            "SELECT id FROM unnest(%s::text[]) AS id WHERE pg_try_advisory_lock(%s, hashtext(id))",
            [list(ids), EMBED_LOCK_CLASS],
        )
        return [row[0] for row in cursor.fetchall()]


def _unlock_rows(ids: list[str]) -> None:
    if not ids or connection.connection is None:
        return  # the connection is gone, and its locks with it
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(id)) FROM unnest(%s::text[]) AS id",
                       [EMBED_LOCK_CLASS, list(ids)])


def memories_embed(*, memory_ids: list[str], attempt: int = 1,
                   pacer: Pacer | None = None) -> EmbedOutcome:
    """Embed the given memories that still need it, in batches; schedule a retry on failure.

    With a `pacer` (the queued job's), batches are sized by it and none starts once its
    budget is spent: the memories not reached are returned in `left`. Without one every
    memory is embedded (callers that run inline: benchmarks, imports).

    Runs outside any transaction: the model call may take seconds, and each row's write
    checks that the text it embedded is still the memory's current text, so an edit made
    meanwhile is never overwritten by a stale vector (its own job embeds the new text).
    Memories another job is embedding right now are skipped: that job finishes them, or
    dies and releases them to the backlog drain.
    """
    locked = _lock_rows(sorted(set(memory_ids)))
    try:
        outcome = _embed_locked(locked, attempt=attempt, pacer=pacer)
    finally:
        _unlock_rows(locked)
    outcome.skipped = sorted(set(outcome.skipped) | (set(memory_ids) - set(locked)))
    return outcome


def _embed_locked(memory_ids: list[str], *, attempt: int, pacer: Pacer | None = None) -> EmbedOutcome:
    config = settings.SAM_EMBEDDING
    outcome = EmbedOutcome()
    provider = embeddings.get_provider()
    # Read after locking: a job that finished these rows a moment ago has made them ready.
    # A memory already embedded with this model is never embedded again (a job delivered
    # twice, or one that resumes after a kill, skips what was saved); its text digest is
    # checked again when the vector is written.
    rows = list(
        Memory.objects.filter(pk__in=memory_ids)
        .exclude(embedding_status=EmbeddingStatus.READY, embedding_model=provider.name)
        .values("id", "space_id", "title", "content", "canonical_phrases", "embedding_input_hash")
        .order_by("id")
    )
    outcome.skipped = sorted(set(memory_ids) - {r["id"] for r in rows})
    if not rows:
        return outcome
    batch_size = max(1, int(config["BATCH_SIZE"]))
    if pacer is None:
        pacer = Pacer(budget_seconds=float("inf"), first=batch_size, most=batch_size)
    start = 0
    while start < len(rows):
        size = pacer.next_size()
        if size == 0:
            outcome.left = [r["id"] for r in rows[start:]]
            break
        batch = rows[start:start + size]
        start += len(batch)
        began = time.monotonic()
        _embed_batch(batch, provider=provider, attempt=attempt, outcome=outcome,
                     model_batch=batch_size)
        pacer.done(len(batch), time.monotonic() - began)
    if outcome.embedded:
        spaces = Memory.objects.filter(pk__in=outcome.embedded).values_list("space_id", flat=True)
        spaces_changed.send(sender=Space, space_ids=sorted(set(spaces)))
    return outcome


def _embed_batch(batch: list[dict], *, provider: EmbeddingProvider, attempt: int, outcome: EmbedOutcome,
                 model_batch: int) -> None:
    """Embed one batch and save it in one commit (the model call is done before it opens)."""
    texts = [entry.embedding_text(r) for r in batch]
    # Long memories also get a vector per window of their content, in the same call.
    windows = [passages.windows(r["content"]) for r in batch]
    every = texts + [text for found in windows for text in found]
    try:
        # Model calls no larger than a batch, windows included (APIs cap the inputs per call).
        vectors = [vector for start_at in range(0, len(every), model_batch)
                   for vector in provider.embed(every[start_at:start_at + model_batch])]
    except EmbeddingError as exc:
        _embedding_failed(batch, attempt=attempt, error=str(exc), outcome=outcome)
        return
    now = timezone.now()
    window_vectors = iter(vectors[len(batch):])
    with transaction.atomic():
        written_ids: list[str] = []
        new_windows: list[MemoryPassage] = []
        for row, vector, found in zip(batch, vectors[:len(batch)], windows, strict=True):
            mine = [next(window_vectors) for _ in found]
            # Only if the memory still holds the text this vector was computed from.
            written = Memory.objects.filter(
                pk=row["id"], embedding_input_hash=row["embedding_input_hash"]
            ).update(
                embedding=vector.tolist(), embedding_status=EmbeddingStatus.READY,
                embedding_model=provider.name, embedded_at=now, embedding_error="",
                embedding_attempts=attempt,
            )
            if written:
                written_ids.append(row["id"])
                new_windows += [
                    MemoryPassage(memory_id=row["id"], space_id=row["space_id"], position=position,
                                  embedding=window.tolist())
                    for position, window in enumerate(mine)]
            (outcome.embedded if written else outcome.skipped).append(row["id"])
        # The windows of the memories written, replaced: one delete and one insert a batch.
        MemoryPassage.objects.filter(memory_id__in=written_ids).delete()
        MemoryPassage.objects.bulk_create(new_windows)


def _ids_awaiting_retry() -> set[str]:
    """Memories whose failed embedding has a retry scheduled: the drain leaves them to it."""
    waiting: set[str] = set()
    retries = Schedule.objects.filter(func="memories.tasks.memory_embed")
    for kwargs in retries.values_list("kwargs", flat=True):
        try:
            waiting.update(ast.literal_eval(kwargs or "{}").get("memory_ids") or [])
        except (ValueError, SyntaxError):
            continue
    return waiting


def _claim_backlog(*, grace_seconds: float, batch: int, holders: int) -> list[str]:
    """Lock up to `batch` of the oldest pending memories no job holds; returns their ids.

    Rows younger than the grace are left to the job enqueued on their commit. Up to
    `holders` other jobs may each hold a batch, so look that far ahead for free rows.
    """
    cutoff = timezone.now() - timedelta(seconds=grace_seconds)
    candidates = [
        pk for pk in Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING, updated_at__lte=cutoff)
        .exclude(pk__in=_ids_awaiting_retry())
        .order_by("updated_at", "id").values_list("id", flat=True)[:batch * (holders + 2)]
    ]
    locked = _lock_rows(candidates)
    kept, surplus = locked[:batch], locked[batch:]
    _unlock_rows(surplus)
    return kept


@dataclass
class DrainOutcome:
    embedded: int = 0
    embedded_ids: list[str] = field(default_factory=list)
    batches: int = 0
    backlog_left: bool = False
    slot: int | None = None


def _take_drain_slot(slots: int) -> int | None:
    with connection.cursor() as cursor:
        for slot in range(slots):
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [DRAIN_SLOT_LOCK_CLASS, slot])
            if cursor.fetchone()[0]:
                return slot
    return None


def _release_drain_slot(slot: int) -> None:
    if connection.connection is None:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [DRAIN_SLOT_LOCK_CLASS, slot])


def memories_embed_backlog(*, grace_seconds: float, batch: int, budget_seconds: float,
                           slots: int) -> DrainOutcome:
    """Embed pending memories whose job was lost, batch after batch, for up to `budget_seconds`.

    At most `slots` drains run at once (one per worker is enough to keep them all busy);
    a drain that finds every slot taken returns at once. Each claim is as many rows as the
    drain embeds in a few seconds at the rate it measured (at most `batch`), so a drain on a
    slow worker still commits often and stops in time. `backlog_left` says the budget ran
    out with rows still waiting, so the caller can start another drain straight away.
    """
    outcome = DrainOutcome(slot=_take_drain_slot(slots))
    if outcome.slot is None:
        return outcome
    pacer = embed_pacer(budget_seconds=budget_seconds, most=batch)
    try:
        while True:
            size = pacer.next_size()
            if size == 0:
                outcome.backlog_left = True
                break
            ids = _claim_backlog(grace_seconds=grace_seconds, batch=size, holders=slots)
            if not ids:
                break
            settled = 0
            try:
                for attempts, group in _by_attempts(ids).items():
                    result = _embed_locked(group, attempt=attempts + 1, pacer=pacer)
                    outcome.embedded += len(result.embedded)
                    outcome.embedded_ids.extend(result.embedded)
                    settled += len(result.embedded) + len(result.retry_scheduled) + len(result.failed)
                    if result.left:
                        outcome.backlog_left = True
            finally:
                _unlock_rows(ids)
            outcome.batches += 1
            if not settled:
                break  # rows it cannot move on (edited meanwhile): leave them to their own jobs
    finally:
        _release_drain_slot(outcome.slot)
    return outcome


def _by_attempts(ids: list[str]) -> dict[int, list[str]]:
    """Group ids by attempts so far: a lost retry counts as the attempt it was to be."""
    groups: dict[int, list[str]] = {}
    for pk, attempts in Memory.objects.filter(pk__in=ids).values_list("id", "embedding_attempts"):
        groups.setdefault(attempts, []).append(pk)
    return groups


def _embedding_failed(batch: list[dict], *, attempt: int, error: str, outcome: EmbedOutcome) -> None:
    config = settings.SAM_EMBEDDING
    ids = [row["id"] for row in batch]
    logger.warning("embedding %d memories failed (attempt %d): %s", len(ids), attempt, error)
    if attempt >= config["MAX_ATTEMPTS"]:
        Memory.objects.filter(pk__in=ids).update(
            embedding_status=EmbeddingStatus.FAILED, embedding_attempts=attempt,
            embedding_error=error[:500],
        )
        outcome.failed.extend(ids)
        return
    Memory.objects.filter(pk__in=ids).update(embedding_attempts=attempt, embedding_error=error[:500])
    retry_at = schedule_retry("memories.tasks.memory_embed",
                              name=f"embed retry {attempt + 1} {ids[0]} +{len(ids) - 1}",
                              kwargs={"memory_ids": ids, "attempt": attempt + 1},
                              delay_seconds=config["RETRY_BASE_SECONDS"] * (2 ** (attempt - 1)))
    outcome.retry_scheduled.extend(ids)
    outcome.retry_at = retry_at


def memories_reembed(*, space: Space | None = None, only_stale: bool = False) -> int:
    """Mark memories for embedding again (after a model change) and enqueue them."""
    queryset = Memory.objects.all()
    if space is not None:
        queryset = queryset.filter(space=space)
    if only_stale:
        queryset = queryset.exclude(embedding_model=embeddings.get_provider().name, embedding_status="ready")
    ids = list(queryset.values_list("id", flat=True))
    batch = max(1, settings.SAM_EMBEDDING["BATCH_SIZE"]) * 16
    with transaction.atomic():
        queryset.filter(pk__in=ids).update(
            embedding_status=EmbeddingStatus.PENDING, embedding_attempts=0, embedding_error=""
        )
        for start in range(0, len(ids), batch):
            enqueue_embedding(ids[start:start + batch])
    return len(ids)
