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
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone

from core.actor import Actor
from core.errors import InvalidInput
from core.models import Space
from core.signals import announce_change
from governance import access
from governance.audit.services import audit_record
from governance.crypto import datakeys, rotation
from governance.models import DataKey

# --- what the apps above register ----------------------------------------------------------
# Forgetting, deleting and the retention window reach data that apps above governance keep;
# governance never names their models. Each app registers, as it starts, how to delete what
# it keeps in a space (memories.apps, prd.apps, retrieval.apps). Every callable returns
# what QuerySet.delete() does: rows deleted per model label, cascades included.

Deleted = dict[str, int]


@dataclass(frozen=True)
class SpaceData:
    # Rows that quote or derive from these memories: (space, memory ids, whole space?).
    with_memories: Callable[[Any, list[str], bool], Deleted] | None = None
    # Everything else the app keeps in the space, deleted before its keys are destroyed.
    everything: Callable[[Any], Deleted] | None = None
    # What the space's retention window removes: (space, cutoff).
    expired: Callable[[Any, datetime], Deleted] | None = None
    # Statistics that count the space's search tokens, dropped when it forgets everything.
    statistics: Callable[[Any], None] | None = None
    # Receipt names of the rows deleted, by model; other models count under their label.
    count_names: dict[type[Model], str] = field(default_factory=dict)


_space_data: list[SpaceData] = []


def register_space_data(data: SpaceData) -> None:
    _space_data.append(data)


def _count_name(label: str) -> str:
    for data in _space_data:
        for model, name in data.count_names.items():
            if model._meta.label == label:
                return name
    return label


def _announce(space_id: int) -> None:
    announce_change([space_id])


def _purge(space, memory_filter: Q | None = None) -> dict[str, int]:
    """Delete a space's memories (all, or those matching) and what derives from them."""
    Memory = access.memory_registry().model
    memories = Memory._default_manager.filter(space=space)
    if memory_filter is not None:
        memories = memories.filter(memory_filter)
    ids = list(memories.values_list("pk", flat=True))
    counts = {"memories": 0, "versions": 0, "recall_events": 0}
    for data in _space_data:
        if data.with_memories is not None:
            _tally(counts, data.with_memories(space, ids, memory_filter is None))
    # Versions, counters and grants go with their memory (cascades), and are counted.
    _tally(counts, Memory._default_manager.filter(pk__in=ids).delete()[1])
    return counts


def _tally(counts: dict[str, int], deleted: dict[str, int]) -> None:
    """Add what a QuerySet.delete() reports (rows per model label, cascades included)."""
    for label, rows in deleted.items():
        if rows:
            name = _count_name(label)
            counts[name] = counts.get(name, 0) + rows


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for name, rows in more.items():
        counts[name] = counts.get(name, 0) + rows


def _purge_derived(space) -> dict[str, int]:
    counts: dict[str, int] = {}
    for data in _space_data:
        if data.everything is not None:
            _tally(counts, data.everything(space))
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
    Space.objects.select_for_update().get(pk=space.pk)
    _add(counts, _purge(space))
    _add(counts, _purge_derived(space))
    # This transaction's own hold on the old key (if it sealed anything) must not outlive it.
    datakeys.forget_cached(space.pk)
    return counts


def space_forget(*, actor: Actor, slug: str) -> dict[str, Any]:
    """Forget everything in a user space; returns a deletion receipt. The space stays."""
    space = access.access_space(actor, slug=slug, action="manage")
    if space.kind != "user":
        raise InvalidInput("Only a user space can be forgotten this way.",
                           fields={"space": [f"'{slug}' is a {space.kind} space; delete it instead."]})
    with transaction.atomic():
        counts = _purge_all(space)
        _drop_statistics(space)
        # The space stays, and so do its settings: its own sealed ones (the description)
        # are read now and sealed again under its new key, or nothing could open them.
        settings_kept = {name: getattr(space, name) for name in space.SEALED_FIELDS}
        counts["data_keys_destroyed"] = _destroy_keys(space, reason="forget everything")
        for name, value in settings_kept.items():
            setattr(space, name, value)
        space.save(update_fields=list(settings_kept))
        return _receipted("forget", actor, space, counts)


def space_delete(*, actor: Actor, slug: str) -> dict[str, Any]:
    """Delete a space, its memories and its data keys (crypto-shredding); returns a receipt."""
    space = access.access_space(actor, slug=slug, action="manage")
    with transaction.atomic():
        counts = _purge_all(space)
        counts["data_keys_destroyed"] = _destroy_keys(space, reason="space deleted")
        receipt = _receipted("delete", actor, space, counts)
        space.delete()
    return receipt


def _destroy_keys(space, *, reason: str) -> int:
    """Destroy every data key of the space (crypto-shredding); returns how many.

    Whatever they sealed, wherever a copy survives (the append-only audit log, a backup),
    can no longer be read. This process's cached hold on them goes too.
    """
    keys = list(DataKey.objects.filter(space=space).values_list("pk", flat=True))
    for key_id in keys:
        rotation.destroy_key(key_id, reason=reason)
    datakeys.forget_cached(space.pk)
    return len(keys)


def _receipted(kind: str, actor: Actor, space, counts: dict[str, int]) -> dict[str, Any]:
    """The deletion receipt, audited (counts only), and caches told."""
    receipt = _receipt(kind, actor, space, counts)
    audit_record(kind, actor=actor, space=space, target=space, after=receipt)
    _announce(space.pk)
    return receipt


def _drop_statistics(space) -> None:
    for data in _space_data:
        if data.statistics is not None:
            data.statistics(space)


def _receipt(kind: str, actor: Actor, space, counts: dict[str, int]) -> dict[str, Any]:
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
    purged, _ = retention_enforce_until(now=now)
    return purged


def retention_enforce_until(*, now: datetime | None = None, after_space: int | None = None,
                            deadline: float | None = None) -> tuple[dict[str, dict[str, int]], int | None]:
    """retention_enforce for the spaces after `after_space` (pk order), starting none once
    time.monotonic() passes `deadline`. Returns what was purged and the pk of the last space
    done when spaces remain (the caller queues a follow-up from there), else None."""
    now = now or timezone.now()
    purged: dict[str, dict[str, int]] = {}
    spaces = Space.objects.filter(retention_days__isnull=False).order_by("pk")
    if after_space is not None:
        spaces = spaces.filter(pk__gt=after_space)
    last_done: int | None = None
    for space in spaces:
        if last_done is not None and deadline is not None and time.monotonic() >= deadline:
            return purged, last_done
        last_done = space.pk
        assert space.retention_days is not None  # filtered above
        cutoff = now - timedelta(days=space.retention_days)
        with transaction.atomic():
            counts = _purge(space, Q(updated_at__lt=cutoff))
            for data in _space_data:
                if data.expired is not None:
                    _tally(counts, data.expired(space, cutoff))
            if any(counts.values()):
                purged[space.slug] = counts
                audit_record("retention_purge", actor=access.SYSTEM, space=space, target=space,
                             after={"cutoff": cutoff.isoformat(), "deleted": counts,
                                    "retention_days": space.retention_days})
                _announce(space.pk)
    return purged, None
