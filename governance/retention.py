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
from django.db.models import Q
from django.utils import timezone

from governance import access
from governance.crypto import rotation
from governance.models import DataKey
from samsite.api.errors import InvalidInput

# Models outside memories that hold a space's derived data, deleted with its memories.
DERIVED_APPS = ("prd",)


def _audit(action: str, **kwargs: Any) -> None:
    from governance.audit.services import audit_record

    audit_record(action, **kwargs)


def _announce(space_id: int) -> None:
    from memories.services import announce_change

    announce_change([space_id])


def _purge(space, memory_filter: Q | None = None) -> dict[str, int]:
    """Delete a space's memories (all, or those matching) and what derives from them."""
    Memory = apps.get_model("memories", "Memory")
    MemoryVersion = apps.get_model("memories", "MemoryVersion")
    RecallEvent = apps.get_model("retrieval", "RecallEvent")
    memories = Memory.objects.filter(space=space)
    if memory_filter is not None:
        memories = memories.filter(memory_filter)
    ids = list(memories.values_list("pk", flat=True))
    counts = {"memories": len(ids),
              "versions": MemoryVersion.objects.filter(memory_id__in=ids).count()}
    # Recall events quote queries and rationales about these memories; forgetting a whole
    # space also drops every recall that looked into it.
    touched = Q(memory_ids__overlap=ids) if ids else Q(pk__in=[])
    if memory_filter is None:
        touched |= Q(spaces__contains=[space.slug])
    recalls = RecallEvent.objects.filter(touched)
    counts["recall_events"] = recalls.count()
    recalls.delete()
    Memory.objects.filter(pk__in=ids).delete()
    return counts


def _purge_derived(space) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in DERIVED_APPS:
        if not apps.is_installed(label):
            continue
        for model in apps.get_app_config(label).get_models():
            field_names = {f.name for f in model._meta.get_fields()}
            if "space" in field_names:
                deleted, _ = model.objects.filter(space=space).delete()
                if deleted:
                    counts[model._meta.label] = deleted
    return counts


def space_forget(*, actor, slug: str) -> dict[str, Any]:
    """Forget everything in a user space; returns a deletion receipt. The space stays."""
    space = access.access_space(actor, slug=slug, action="manage")
    if space.kind != "user":
        raise InvalidInput("Only a user space can be forgotten this way.",
                           fields={"space": [f"'{slug}' is a {space.kind} space; delete it instead."]})
    with transaction.atomic():
        counts = _purge(space)
        counts.update(_purge_derived(space))
        retrieval_stats(space)
        keys = list(DataKey.objects.filter(space=space).values_list("pk", flat=True))
        for key_id in keys:
            rotation.destroy_key(key_id, reason="forget everything")
        counts["data_keys_destroyed"] = len(keys)
        receipt = _receipt("forget", actor, space, counts)
        _audit("forget", actor=actor, space=space, target=space, after=receipt)
        _announce(space.pk)
    return receipt


def space_delete(*, actor, slug: str) -> dict[str, Any]:
    """Delete a space, its memories and its data keys (crypto-shredding); returns a receipt."""
    space = access.access_space(actor, slug=slug, action="manage")
    with transaction.atomic():
        counts = _purge(space)
        counts.update(_purge_derived(space))
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


def retention_enforce(*, now=None) -> dict[str, int]:
    """Delete memories older than their space's retention window. Returns counts per space."""
    Space = apps.get_model("memories", "Space")
    now = now or timezone.now()
    purged: dict[str, int] = {}
    for space in Space.objects.filter(retention_days__isnull=False):
        cutoff = now - timedelta(days=space.retention_days)
        with transaction.atomic():
            counts = _purge(space, Q(updated_at__lt=cutoff))
            old_recalls = apps.get_model("retrieval", "RecallEvent").objects.filter(
                spaces=[space.slug], created_at__lt=cutoff)
            counts["recall_events"] += old_recalls.delete()[0]
            if counts["memories"]:
                purged[space.slug] = counts["memories"]
                _audit("retention_purge", actor=access.SYSTEM, space=space, target=space,
                       after={"cutoff": cutoff.isoformat(), "deleted": counts,
                              "retention_days": space.retention_days})
                _announce(space.pk)
    return purged
