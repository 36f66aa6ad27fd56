"""Recall's workflows: a recall or a context pack with its side effects, and a memory's
training run.

Every recall writes audit rows, and a tracked one also raises the access counters and keeps
the recall event (docs/recall.md, "Pipeline", step 9; docs/audit.md, "Recalls").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.actor import Actor
from core.errors import Conflict
from core.models import Space
from core.results import WriteResult
from governance import access, privacy
from governance.audit.services import audit_record
from memories.models import Memory, MemoryStats
from retrieval import packs, pipeline, presenters, training
from retrieval.models import RecallEvent
from retrieval.pipeline import RecallRequest, RecallResult


def recall_run(*, actor: Actor, request: RecallRequest, track: bool = True) -> WriteResult[RecallResult]:
    """Run a recall for `actor` and record it (recall_record): the answer holds the result
    and what redaction removed from the query before the recall event kept it.

    The recall itself reads only (from the read replica when the request does); the record
    is its own small transaction after it.
    """
    result = pipeline.recall(actor=actor, request=request)
    recorded = recall_record(actor=actor, result=result, active_task=request.context.active_task, track=track)
    return WriteResult(result, redaction_report=recorded.redaction_report)


@dataclass(frozen=True)
class PackAnswer:
    """A context pack and the recall it was built from (whose timings go to /metrics)."""

    pack: packs.ContextPack
    recall: RecallResult


def context_pack_build(*, actor: Actor, request: RecallRequest, pack_type: str, token_budget: int,
                       include_unvalidated: bool = False, track: bool = True) -> PackAnswer:
    """Recall for a context pack, build the pack (packs.build_pack) and record the recall.

    A boot pack with nothing to match (no query, task or conversation) lists what was used
    lately instead. Audited like any recall, whatever `track` says.
    """
    context = request.context
    if pack_type == "boot" and not (context.query or context.active_task or context.conversation):
        request = replace(request, query_type="recent")
    result = pipeline.recall(actor=actor, request=request)
    pack = packs.build_pack(result, pack_type=pack_type, token_budget=token_budget, as_of=request.as_of,
                            actor=actor, include_unvalidated=include_unvalidated)
    recall_record(actor=actor, result=result, active_task=context.active_task, track=track)
    return PackAnswer(pack=pack, recall=result)


@transaction.atomic
def recall_record(*, actor: Actor, result: RecallResult, active_task: str = "",
                  track: bool = True) -> WriteResult[RecallEvent | None]:
    """Audit a recall or context pack; when it is tracked, also count and explain it.

    Every recall writes `recall` audit rows, whatever was asked: one per space it read
    (one without a space when it read none), saying who, which spaces and how many items,
    under the request's id. A recall is *tracked* when the caller asked for it (`track`,
    the default) and every memory mode involved allows traces; only then are the access
    counters raised and a RecallEvent kept with the query, the active task and why each
    memory came back. An untracked recall's audit rows hold counts only: nothing that
    contains or reveals the query (no text, no memory ids).

    Sets `result.track` to whether it was tracked; the answer holds the event (None if
    not) and what redaction removed from the query before it was kept.
    The modes were read when the recall ran (retrieval.pipeline, for cached answers too).
    Runs after the answer is built. The counters live in MemoryStats, a narrow table,
    so this update never touches the memory rows or their vector index.
    """
    result.track = track and result.track
    written = _record_event(actor, result, active_task) if result.track else WriteResult(None)
    _audit_recall(actor, result, written.instance, [s for s in result.looked_at if s.slug in result.spaces])
    return written


def _record_event(actor: Actor, result: RecallResult, active_task: str) -> WriteResult[RecallEvent | None]:
    ids = [item.id for item in result.items]
    if ids:
        MemoryStats.objects.filter(memory_id__in=ids).update(
            access_count=F("access_count") + 1,
            last_accessed_at=timezone.now(),
        )
    # What was asked is stored text like any other: redacted first.
    kept = {"query_text": result.query_text, "active_task": active_task}
    redaction_report = privacy.redact_fields(kept, fields=kept)
    event = RecallEvent.objects.create(
        actor=access.user_or_none(actor),
        spaces=result.spaces,
        query_text=kept["query_text"],
        active_task=kept["active_task"],
        profile=result.profile.name,
        memory_ids=ids,
        items=[presenters.recall_trace(item) for item in result.items],
        fail_safe=result.fail_safe,
        cached=result.cached,
        duration_ms=result.timings_ms.get("total", result.timings_ms.get("cache", 0.0)),
    )
    return WriteResult(event, redaction_report=redaction_report)


def _audit_recall(actor: Actor, result: RecallResult, event: RecallEvent | None, spaces: list[Space]) -> None:
    """One audit row per space the answer drew from (one without a space if it drew from
    none: the actor reads no space, or every space asked for is silenced by its mode).

    A tracked recall's rows target its RecallEvent, where the query is kept, and name the
    memories returned; an untracked one's rows name the recall by the request alone and
    count what came back.
    """
    by_space: dict[str, list[str]] = {}
    for item in result.items:
        by_space.setdefault(item.row["space_slug"], []).append(item.id)
    target: dict[str, Any] = {"target": event} if event is not None else {"target_type": "recall"}
    each_space: Sequence[Space | None] = spaces or [None]
    for space in each_space:
        returned = by_space.get(space.slug, []) if space is not None else []
        # Counts of this space only: a row sealed under one space's key must not name
        # the other spaces the caller read (their auditors may differ).
        after: dict = {"items": len(returned), "tracked": event is not None,
                       "fail_safe": result.fail_safe}
        if event is not None:
            after["memory_ids"] = returned
        if space is None and result.silenced:
            # Read nothing because every space asked for is silenced (capture_only, off):
            # the row without a space (system key, superusers) says which.
            after["silenced"] = list(result.silenced)
        audit_record("recall", actor=actor, space=space, **target, after=after)


def training_run_create(*, actor: Actor, memory_id: str) -> training.TrainingPanel:
    """Run a memory's training examples against recall now (the actor must be able to edit
    it) and return its panel with the new run. 409 when its space's mode keeps it out of
    recall (capture_only, off): there is nothing to test.

    No transaction around it: each example is a recall, which embeds its query.
    """
    memory = access.access_object(Memory.objects.select_related("space"), actor, pk=memory_id,
                                  action="edit", label="memory")
    if training.run_memory(memory, actor=actor) is None:
        raise Conflict(
            f"Space '{memory.space.slug}' is {memory.space.mode}: recall is off there, so "
            "there is nothing to test."
        )
    return training.panel(memory)
