"""Feedback on memories and the review queue (docs/lifecycle.md).

- confirm: +0.02 confidence, up to 0.95 (seed 000);
- contradict: reliability `contested` (a new version), −0.10 confidence, and a review item;
- used: an answer used the memory (usage_count, last_used_at), which slows its decay; a
  memory put in a chat prompt by prompt augmentation is used too (memories_put_in_prompt).

Recall counts access (access_count, last_accessed_at) and no longer raises confidence:
being found is not being right. A curator resolves review items: archive suggestions by
archiving or keeping the memory, contested memories by archiving, keeping or accepting a
revision.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.actor import Actor
from core.errors import Conflict, InvalidInput
from governance import access, policy
from governance.audit.services import audit_record
from governance.modes import WriteOutcome
from memories import services
from memories.lifecycle import curation, reinforce, write_checks
from memories.models import Memory, MemoryStats, RelationType, ReviewItem, ReviewKind, ReviewStatus

CONTRADICT_STEP = 0.10
# A memory a curator keeps after an archive suggestion starts again from here.
KEPT_CONFIDENCE = 0.75
RESOLUTIONS = {
    ReviewKind.ARCHIVE_SUGGESTION: ("archive", "keep", "dismiss"),
    ReviewKind.CONTESTED: ("archive", "keep", "revised", "dismiss"),
    # Pairs (memory = the older, other = the newer): supersede (the newer replaces the
    # older), merge (the newer into the older, field by field), keep (both hold), reject
    # (the newer is wrong: archived).
    ReviewKind.NEAR_DUPLICATE: ("merge", "supersede", "keep", "reject", "dismiss"),
    ReviewKind.CONTRADICTION: ("supersede", "merge", "keep", "reject", "dismiss"),
    # A memory whose training examples fail: fix it (or its examples) and dismiss, or archive it.
    ReviewKind.TRAINING_FAILURE: ("archive", "dismiss"),
}


@dataclass
class Feedback:
    memory: Memory
    confidence: float
    # False when the memory mode keeps no trace (incognito) or refused nothing but stored nothing.
    recorded: bool = True
    review_item: ReviewItem | None = None


def _memory(actor: Actor, memory_id: str, action: access.Action) -> Memory:
    return access.access_object(
        Memory.objects.select_related("space"), actor, pk=memory_id, action=action, label="memory"
    )


def _set_confidence(memory: Memory, value: float, *, now=None) -> float:
    value = round(min(1.0, max(0.0, value)), 6)
    MemoryStats.objects.filter(memory=memory).update(confidence=value, decayed_at=now or timezone.now())
    return value


def _stats(memory: Memory) -> MemoryStats:
    return MemoryStats.objects.select_for_update().get(memory=memory)


def memory_confirm(*, actor: Actor, memory_id: str) -> Feedback:
    """The memory still holds: +0.02 confidence, up to 0.95."""
    with transaction.atomic():
        memory = _memory(actor, memory_id, "write")
        outcome = policy.write_outcome(actor, memory.space)
        stats = _stats(memory)
        before = stats.confidence
        # Decay up to now first, so the step adds to today's confidence, not last night's;
        # a confidence above the ceiling stays (confirming never lowers it).
        current = reinforce.decayed_now(memory, stats)
        value = _set_confidence(memory, reinforce.raised(current))
        audit_record(
            "edit",
            actor=actor,
            space=memory.space,
            target=memory,
            before={"confidence": round(before, 4)},
            after={"confidence": value},
            note="confirmed",
        )
        if not policy.keep_or_discard(outcome):
            return Feedback(memory, before, recorded=False)
    return Feedback(memory, value)


def memory_contradict(*, actor: Actor, memory_id: str, reason: str = "") -> Feedback:
    """Something says the memory is wrong: contested (a new version), −0.10, and a review item
    for a curator. Contradicting a contested memory again only lowers its confidence."""
    with transaction.atomic():
        memory = _memory(actor, memory_id, "write")
        outcome = policy.write_outcome(actor, memory.space)
        if memory.reliability != "contested":
            memory = services.memory_update(
                actor=actor,
                memory_id=memory.id,
                expected_version=memory.version,
                changes={"reliability": "contested"},
                reason=reason or "contradicted",
            ).instance
        stats = _stats(memory)
        before = stats.confidence
        value = _set_confidence(memory, reinforce.decayed_now(memory, stats) - CONTRADICT_STEP)
        item = None
        if outcome is WriteOutcome.STORE:
            item, _ = ReviewItem.objects.get_or_create(
                kind=ReviewKind.CONTESTED,
                memory=memory,
                status=ReviewStatus.OPEN,
                defaults={
                    "space": memory.space,
                    "reason": f"contradicted: confidence {before:.2f} → {value:.2f}",
                    "evidence": {"confidence_before": round(before, 4), "confidence": value},
                },
            )
        audit_record(
            "edit",
            actor=actor,
            space=memory.space,
            target=memory,
            before={"confidence": round(before, 4)},
            after={"confidence": value, "reliability": "contested"},
            note=reason or "contradicted",
            digest_text=True,
        )
        if not policy.keep_or_discard(outcome):
            return Feedback(memory, before, recorded=False)
    return Feedback(memory, value, review_item=item)


def memory_used(*, actor: Actor, memory_id: str) -> Feedback:
    """An answer used the memory: counted (usage_count, last_used_at), which slows its decay.
    A mode that keeps no traces (incognito, capture_only, off, paused) counts nothing."""
    memory = _memory(actor, memory_id, "read")
    stats = MemoryStats.objects.get(memory=memory)
    if not policy.policy(actor, memory.space).track:
        return Feedback(memory, stats.confidence, recorded=False)
    MemoryStats.objects.filter(memory=memory).update(
        usage_count=F("usage_count") + 1, last_used_at=timezone.now()
    )
    return Feedback(memory, stats.confidence)


def memories_put_in_prompt(*, memory_ids: list[str]) -> int:
    """These memories went into a prompt: each is used and accessed once more (usage_count,
    access_count, last_used_at, last_accessed_at), in one statement. Returns how many were
    counted.

    The caller read them through the gateway and checked that the modes allow traces. The
    counters live in MemoryStats, a narrow table: the memory rows, whose vector index makes
    every update of theirs a non-HOT one, are not touched.
    """
    if not memory_ids:
        return 0
    now = timezone.now()
    return MemoryStats.objects.filter(memory_id__in=sorted(set(memory_ids))).update(
        usage_count=F("usage_count") + 1, access_count=F("access_count") + 1,
        last_used_at=now, last_accessed_at=now,
    )


# --- the review queue -----------------------------------------------------------------


MERGE_SIDES = ("memory", "other")


def _merge_choices(item: ReviewItem, fields: dict[str, str] | None) -> dict[str, str]:
    """The merged text, field by field: for each of title, content and summary, the side
    (`memory`, the older, or `other`, the newer) whose value the merged memory takes."""
    fields = dict(fields or {})
    errors = {}
    for name, side in fields.items():
        if name not in curation.MERGE_TEXT_FIELDS:
            errors[f"fields.{name}"] = [f"A merge picks only {', '.join(curation.MERGE_TEXT_FIELDS)}."]
        elif side not in MERGE_SIDES:
            errors[f"fields.{name}"] = ["Must be 'memory' (the older) or 'other' (the newer)."]
    if errors:
        raise InvalidInput("Invalid merge choices.", fields=errors)
    assert item.other is not None
    return {name: getattr(item.other, name) for name, side in fields.items() if side == "other"}


def review_resolve(*, actor: Actor, item_id: int, action: str, note: str = "",
                   fields: dict[str, str] | None = None) -> ReviewItem:
    """Close a review item with `action` (RESOLUTIONS by kind). Curators and owners only.

    `fields` goes with `merge` on a pair: which side each of title, content and summary
    comes from (the older memory's by default); phrases and tags are the union of both.
    """
    with transaction.atomic():
        queryset = ReviewItem.objects.select_for_update(of=("self",)).select_related(
            "memory", "other", "space")
        item = access.access_object(queryset, actor, pk=str(item_id), action="curate", label="review item")
        if item.status != ReviewStatus.OPEN:
            raise Conflict(f"Review item {item.pk} is {item.status} already.")
        allowed = RESOLUTIONS[ReviewKind(item.kind)]
        if action not in allowed:
            raise InvalidInput(
                f"Must be one of {', '.join(allowed)}.",
                fields={"action": [f"Must be one of {', '.join(allowed)}."]},
            )
        if fields and action != "merge":
            raise InvalidInput("Only a merge picks fields.", fields={"fields": ["Only with action 'merge'."]})
        memory = item.memory
        if action == "archive":
            services.memory_archive(actor=actor, memory_id=memory.id, reason=note or f"review: {item.kind}")
        elif action == "merge":
            assert item.other_id is not None  # near duplicates and contradictions are pairs
            curation.memory_merge(
                actor=actor,
                target_id=memory.id,
                source_ids=[item.other_id],
                expected_version=memory.version,
                changes=_merge_choices(item, fields),
                reason=note or f"{item.kind.replace('_', ' ')} merged in review",
            )
        elif action == "supersede":
            assert item.other is not None
            _refuse_unless_open_pair(item)
            curation.supersede(actor, memory, by=item.other.id,
                               reason=note or "superseded by a newer statement in review")
            write_checks.relate(item.other, memory, RelationType.SUPERSEDES, strength=1.0,
                                provenance={"by": "review", "item": item.pk}, actor=actor)
        elif action == "reject":
            assert item.other is not None
            services.memory_archive(actor=actor, memory_id=item.other.id,
                                    reason=note or f"rejected in review: {item.kind.replace('_', ' ')}")
        elif action == "keep" and item.other_id is not None:
            pass  # both stay as they are; the pair is not raised again
        elif action == "keep":
            _set_confidence(memory, max(KEPT_CONFIDENCE, MemoryStats.objects.get(memory=memory).confidence))
            if item.kind == ReviewKind.CONTESTED:
                services.memory_update(
                    actor=actor,
                    memory_id=memory.id,
                    expected_version=memory.version,
                    changes={"reliability": "confirmed"},
                    reason=note or "kept in review",
                )
        elif action == "revised":
            services.memory_update(
                actor=actor,
                memory_id=memory.id,
                expected_version=memory.version,
                changes={"reliability": "unverified"},
                reason=note or "revised in review",
            )
        item.status = ReviewStatus.DISMISSED if action == "dismiss" else ReviewStatus.RESOLVED
        item.resolution, item.resolved_at = action, timezone.now()
        item.resolved_by = access.user_or_none(actor)
        item.save(update_fields=["status", "resolution", "resolved_at", "resolved_by"])
        audit_record(
            "edit",
            actor=actor,
            space=item.space,
            target=item,
            after={"resolution": action},
            note=note,
            digest_text=True,
        )
    return item


def _refuse_unless_open_pair(item: ReviewItem) -> None:
    """Superseding needs both memories where the item found them: active, in one space."""
    assert item.other is not None
    for name, memory in (("memory", item.memory), ("other", item.other)):
        if memory.archived:
            raise Conflict(f"Memory '{memory.id}' is archived; restore it first.",
                           fields={name: ["Archived since the item was raised."]})
