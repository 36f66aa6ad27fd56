"""Forgetting: retention windows, "forget everything about me", and deleting a space.

Each removes the memories and everything derived from them (versions, embeddings and
search tokens with the rows, counters, recall events, PRD records of the space), then
destroys the space's data keys, so the sealed payloads the append-only audit log still
holds become unreadable. The audit records that the forgetting happened and how much
went, never what.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from governance import access
from governance.crypto import datakeys, rotation
from governance.models import DataKey
from samsite.api.errors import InvalidInput

# Models outside memories that hold a space's derived data, deleted with its memories.
DERIVED_APPS = ("prd",)

# Receipt names of what a purge deletes, by model label; other models count under their label.
COUNT_NAMES = {
    "memories.Memory": "memories",
    "memories.MemoryVersion": "versions",
    "memories.MemoryStats": "memory_stats",
    "retrieval.RecallEvent": "recall_events",
    "prd.PRDExecution": "prd_executions",
    "prd.PRDEvent": "prd_events",
    "prd.PRDDecision": "prd_decisions",
    "prd.PRDRun": "prd_runs",
    "prd.FormedMemory": "formed_memories",
    "prd.ThinkingChain": "thinking_chains",
}


def _audit(action: str, **kwargs: Any) -> None:
    from governance.audit.services import audit_record

    audit_record(action, **kwargs)


def _announce(space_id: int) -> None:
    from memories.services import announce_change

    announce_change([space_id])


def _purge(space, memory_filter: Q | None = None) -> dict[str, int]:
    """Delete a space's memories (all, or those matching) and what derives from them."""
    Memory = apps.get_model("memories", "Memory")
    RecallEvent = apps.get_model("retrieval", "RecallEvent")
    memories = Memory.objects.filter(space=space)
    if memory_filter is not None:
        memories = memories.filter(memory_filter)
    ids = list(memories.values_list("pk", flat=True))
    # Recall events quote queries and rationales about these memories; forgetting a whole
    # space also drops every recall that looked into it.
    touched = Q(memory_ids__overlap=ids) if ids else Q(pk__in=[])
    if memory_filter is None:
        touched |= Q(spaces__contains=[space.slug])
    counts = {"memories": 0, "versions": 0, "recall_events": 0}
    _tally(counts, RecallEvent.objects.filter(touched).delete()[1])
    # Versions, counters and grants go with their memory (cascades), and are counted.
    _tally(counts, Memory.objects.filter(pk__in=ids).delete()[1])
    return counts


def _tally(counts: dict[str, int], deleted: dict[str, int]) -> None:
    """Add what a QuerySet.delete() reports (rows per model label, cascades included)."""
    for label, rows in deleted.items():
        if rows:
            name = COUNT_NAMES.get(label, label)
            counts[name] = counts.get(name, 0) + rows


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for name, rows in more.items():
        counts[name] = counts.get(name, 0) + rows


def _purge_derived(space) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in DERIVED_APPS:
        if not apps.is_installed(label):
            continue
        for model in apps.get_app_config(label).get_models():
            field_names = {f.name for f in model._meta.get_fields()}
            if "space" in field_names:
                _tally(counts, model.objects.filter(space=space).delete()[1])
    return counts


def _purge_prd(space, cutoff) -> dict[str, int]:
    """Delete the space's finished PRD work older than `cutoff`.

    Completed executions whose last event (or completion) is older go, with their events,
    decisions, runs and formed-memory links (cascades). Completed or abandoned thinking
    chains last changed before the cutoff go too, unless an event or decision of an
    execution that stays cites them: those go with that execution. Memories formed from
    either are memories, under the memory rule.
    """
    if not apps.is_installed("prd"):
        return {}
    # By name, not import: governance sits below prd (STYLE.md, "Layout"). The statuses
    # are prd.models.ExecutionStatus.COMPLETED and ChainStatus.COMPLETED / ABANDONED.
    model = apps.get_model
    counts: dict[str, int] = {}
    finished = Coalesce(Greatest("last_event_at", "completed_at"), "updated_at")
    executions = (model("prd", "PRDExecution").objects.filter(space=space, status="completed")
                  .alias(finished=finished).filter(finished__lt=cutoff))
    _tally(counts, executions.delete()[1])
    cited = Q(Exists(model("prd", "PRDEvent").objects.filter(thinking_chain=OuterRef("pk")))) | Q(
        Exists(model("prd", "PRDDecision").objects.filter(thinking_chain=OuterRef("pk"))))
    chains = (model("prd", "ThinkingChain").objects
              .filter(space=space, updated_at__lt=cutoff, status__in=["completed", "abandoned"])
              .exclude(cited))
    _tally(counts, chains.delete()[1])
    return counts


def _purge_all(space) -> dict[str, int]:
    """Delete everything the space holds, leaving no writer in flight, before its keys go.

    Call inside the transaction that destroys the keys. Writers lock the space row FOR KEY
    SHARE before they seal anything (governance.crypto.datakeys.active_key_id); this takes
    it FOR UPDATE, so it waits for the writers in flight, and writers that come later wait
    until the keys are gone and then seal with a new key. A first pass deletes everything
    before taking that lock: an edit (or a PRD append) locks its own row first and the space
    row only when it seals, so taking the space row first could deadlock with it. The
    second pass, under the lock, deletes what the writers in flight added meanwhile.
    """
    counts = _purge(space)
    _add(counts, _purge_derived(space))
    apps.get_model("memories", "Space").objects.select_for_update().get(pk=space.pk)
    _add(counts, _purge(space))
    _add(counts, _purge_derived(space))
    # This transaction's own hold on the old key (if it sealed anything) must not outlive it.
    datakeys.forget_cached(space.pk)
    return counts


def space_forget(*, actor, slug: str) -> dict[str, Any]:
    """Forget everything in a user space; returns a deletion receipt. The space stays."""
    space = access.access_space(actor, slug=slug, action="manage")
    if space.kind != "user":
        raise InvalidInput("Only a user space can be forgotten this way.",
                           fields={"space": [f"'{slug}' is a {space.kind} space; delete it instead."]})
    with transaction.atomic():
        counts = _purge_all(space)
        retrieval_stats(space)
        # The space stays, and so do its settings: its own sealed ones (the description)
        # are read now and sealed again under its new key, or nothing could open them.
        settings_kept = {name: getattr(space, name) for name in space.SEALED_FIELDS}
        keys = list(DataKey.objects.filter(space=space).values_list("pk", flat=True))
        for key_id in keys:
            rotation.destroy_key(key_id, reason="forget everything")
        counts["data_keys_destroyed"] = len(keys)
        datakeys.forget_cached(space.pk)
        for name, value in settings_kept.items():
            setattr(space, name, value)
        space.save(update_fields=list(settings_kept))
        receipt = _receipt("forget", actor, space, counts)
        _audit("forget", actor=actor, space=space, target=space, after=receipt)
        _announce(space.pk)
    return receipt


def space_delete(*, actor, slug: str) -> dict[str, Any]:
    """Delete a space, its memories and its data keys (crypto-shredding); returns a receipt."""
    space = access.access_space(actor, slug=slug, action="manage")
    with transaction.atomic():
        counts = _purge_all(space)
        keys = list(DataKey.objects.filter(space=space).values_list("pk", flat=True))
        for key_id in keys:
            rotation.destroy_key(key_id, reason="space deleted")
        counts["data_keys_destroyed"] = len(keys)
        receipt = _receipt("delete", actor, space, counts)
        _audit("delete", actor=actor, space=space, target=space, after=receipt)
        _announce(space.pk)
        space.delete()
    return receipt


def retrieval_stats(space) -> None:
    """Drop the lexeme statistics of a space (they count its search tokens)."""
    apps.get_model("retrieval", "LexemeStat").objects.filter(space=space).delete()
    apps.get_model("retrieval", "SpaceTextStats").objects.filter(space=space).delete()


def _receipt(kind: str, actor, space, counts: dict[str, int]) -> dict[str, Any]:
    body = {
        "receipt_id": str(uuid.uuid4()),
        "kind": kind,
        "space": space.slug,
        "requested_by": str(access.user_or_none(actor) or "system"),
        "at": timezone.now().isoformat(),
        "deleted": counts,
    }
    body["digest"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return body


def retention_enforce(*, now=None) -> dict[str, dict[str, int]]:
    """Apply every space's retention window. Returns {slug: deleted counts} per space that lost anything.

    For each space with a window, what is older than the window goes: memories not changed
    within it (with their versions, counters, vectors, search tokens, and the recall events
    that returned them), finished PRD executions and thinking chains (`_purge_prd`), and
    every recall event that looked into the space, including one that also looked into
    other spaces: its query and rationales may quote this space's memories, and a recall
    event cannot be split. Each space is one transaction, audited with counts only.
    """
    Space = apps.get_model("memories", "Space")
    RecallEvent = apps.get_model("retrieval", "RecallEvent")
    now = now or timezone.now()
    purged: dict[str, dict[str, int]] = {}
    for space in Space.objects.filter(retention_days__isnull=False).order_by("pk"):
        cutoff = now - timedelta(days=space.retention_days)
        with transaction.atomic():
            counts = _purge(space, Q(updated_at__lt=cutoff))
            old_recalls = RecallEvent.objects.filter(spaces__contains=[space.slug], created_at__lt=cutoff)
            counts["recall_events"] += old_recalls.delete()[0]
            _add(counts, _purge_prd(space, cutoff))
            if any(counts.values()):
                purged[space.slug] = counts
                _audit("retention_purge", actor=access.SYSTEM, space=space, target=space,
                       after={"cutoff": cutoff.isoformat(), "deleted": counts,
                              "retention_days": space.retention_days})
                _announce(space.pk)
    return purged
