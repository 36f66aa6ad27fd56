"""django-q2 entry points for memories: load by id, one service call, safe to run twice.

Embedding recovery (see README, "Jobs"): the job enqueued on commit can be lost (a worker
killed mid-batch, a web process that died between commit and enqueue, a queue purged).
`memory_embed_pending` runs every minute and starts backlog drains; each worker also
starts one as it comes up, so a restarted cluster finishes what its predecessor left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection

from core.jobs import Pacer, enqueue, job_budget_seconds
from governance import idempotency
from memories import settle
from memories.capture import jobs as capture_jobs
from memories.capture import requeue as capture_requeue
from memories.capture import runs as capture_runs
from memories.categories import services as categories
from memories.embeddings import jobs as embedding_jobs
from memories.models import Memory

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Rows younger than this are left to the job enqueued on their commit (which normally runs
# within a second or two); the drain's row locks make a race harmless, only wasteful.
PENDING_GRACE_SECONDS = 15
# The most rows a drain claims at once (its claims are sized by its rate, core.jobs.Pacer):
# a few model batches, so a killed drain loses little work.
DRAIN_BATCH_BATCHES = 4


def _with_live_connection(work: Callable[[], T]) -> T:
    """Run `work`, reconnecting once if the database connection turned out to be dead.

    After a database restart every worker holds a connection the server has closed; the
    first query on it fails. The service calls are safe to repeat (ready rows are skipped),
    so one retry on a fresh connection turns that failure into a short delay.
    """
    if connection.in_atomic_block:  # inline (sync) runs inside a caller's transaction
        return work()
    close_old_connections()
    if connection.connection is not None and not connection.is_usable():
        connection.close()
    try:
        return work()
    except (OperationalError, InterfaceError) as exc:
        logger.warning("database connection lost during an embedding job, retrying: %s", exc)
        connection.close()
        time.sleep(1)
        return work()


def memory_embed(*, memory_ids: list[str], attempt: int = 1) -> dict:
    """Embed these memories for up to the job's time budget; queue a follow-up for the rest."""
    began = time.monotonic()
    pacer = embedding_jobs.embed_pacer()
    outcome = _with_live_connection(lambda: embedding_jobs.memories_embed(
        memory_ids=memory_ids, attempt=attempt, pacer=pacer))
    logger.info("embedded %d memories in %.1f s (last batch %.1f/s), %d left for a follow-up",
                len(outcome.embedded), time.monotonic() - began, pacer.rate or 0, len(outcome.left))
    settle.settle(outcome.embedded)
    # Queued after this job's row locks are released (memories_embed), so the follow-up
    # never finds its own rows held.
    embedding_jobs.enqueue_embedding(outcome.left, attempt=attempt, on_commit=False)
    return {
        "embedded": len(outcome.embedded), "skipped": len(outcome.skipped),
        "retry_scheduled": len(outcome.retry_scheduled), "failed": len(outcome.failed),
        "left": len(outcome.left),
    }


def memories_settle(*, memory_ids: list[str]) -> None:
    """The after-write steps of an edit that kept its text (and so its vector)."""
    settle.settle(memory_ids)


def _drain_slots() -> int:
    return max(1, int(settings.Q_CLUSTER.get("workers") or 1))


def enqueue_backlog_drains(*, count: int, grace_seconds: float = PENDING_GRACE_SECONDS) -> None:

    for _ in range(count):
        enqueue("memories.tasks.memory_embed_backlog", grace_seconds=grace_seconds,
                task_name="embed pending backlog", group="embedding",
                timeout=embedding_jobs.embed_task_timeout())


def memory_embed_backlog(*, grace_seconds: float = PENDING_GRACE_SECONDS) -> dict:
    """Embed memories left pending, for up to the job's time budget; hand over if rows remain."""
    batch = max(1, int(settings.SAM_EMBEDDING["BATCH_SIZE"])) * DRAIN_BATCH_BATCHES
    budget = job_budget_seconds(embedding_jobs.embed_task_timeout())
    outcome = _with_live_connection(lambda: embedding_jobs.memories_embed_backlog(
        grace_seconds=grace_seconds, batch=batch, budget_seconds=budget,
        slots=_drain_slots()))
    if outcome.embedded:
        logger.info("embedded %d memories left pending", outcome.embedded)
    settle.settle(outcome.embedded_ids)
    if outcome.backlog_left:
        # Keep draining without waiting for the next scheduler tick.
        enqueue_backlog_drains(count=1, grace_seconds=grace_seconds)
    return {"embedded": outcome.embedded, "batches": outcome.batches,
            "backlog_left": outcome.backlog_left, "slot": outcome.slot}


def memory_embed_pending() -> dict:
    """Scheduled every minute: start one backlog drain per worker (extra ones exit at once)."""
    slots = _drain_slots()
    enqueue_backlog_drains(count=slots)
    return {"drains": slots}


def recover_on_worker_start(**kwargs) -> None:
    """django-q2's post_spawn receiver: a new worker starts a drain of everything pending.

    No grace here: when a worker (re)starts, jobs of the process it replaces are gone, and
    a row whose job is still queued is merely embedded by whichever job locks it first.
    """
    from django_q.conf import Conf

    if Conf.SYNC:
        return  # tasks run inline: nothing is ever left in a queue
    try:
        _with_live_connection(lambda: enqueue_backlog_drains(count=1, grace_seconds=0))
    except Exception:  # a worker must start even when the database is not there yet
        logger.exception("could not enqueue the start-up embedding drain")
    finally:
        # The worker process keeps no connection opened before its first task.
        connection.close()


def idempotency_keys_prune() -> dict:
    """Scheduled hourly: forget Idempotency-Key answers older than their lifetime."""
    return {"deleted": idempotency.keys_prune()}


def chat_import_run(*, import_id: str, path: str | None = None) -> dict:
    """Import an uploaded chat history (memories.capture.jobs). `path` is accepted from jobs
    queued before they carried the import's id only."""
    done = capture_jobs.run(import_id, path)
    return {"import": import_id, "status": done.status if done else "not queued"}


def chat_imports_reap() -> dict:
    """Scheduled every ten minutes: fail imports whose job died mid-run (memories.capture.runs),
    and enqueue again the jobs of imports queued too long (memories.capture.requeue)."""
    return {"failed": capture_runs.reap(), "requeued": capture_requeue.requeue_waiting()}


def categories_place(*, space_id: int, after: str | None = None) -> dict:
    """Place every memory of a space in its categories again (their keywords changed).

    In pk order, in batches sized from the measured rate (core.jobs.Pacer), each its own
    commit; once the time budget is spent the rest (pks after the last one placed) go to a
    follow-up job.
    """
    memories = Memory.objects.filter(space_id=space_id, archived=False).order_by("pk")
    if after is not None:
        memories = memories.filter(pk__gt=after)
    ids = list(memories.values_list("pk", flat=True))
    pacer = Pacer(budget_seconds=job_budget_seconds(), first=200, most=5000)
    links = placed = 0
    while placed < len(ids):
        size = pacer.next_size()
        if size == 0:
            enqueue("memories.tasks.categories_place", space_id=space_id, after=ids[placed - 1],
                    task_name=f"categories of space {space_id}, continued", group="categories")
            break
        batch = ids[placed:placed + size]
        began = time.monotonic()
        links += categories.place(batch)
        placed += len(batch)
        pacer.done(len(batch), time.monotonic() - began)
    return {"memories": placed, "links": links, "left": len(ids) - placed}
