"""Curation workflows over several memories: merging duplicates and resolving conflicts.

Both are curator actions (`curate` in the space) built from the single-memory services,
so every step is versioned, redacted, indexed and audited like any other edit. They
lock every memory involved first, in primary-key order, so two curators merging the
same memories the other way round wait for each other instead of deadlocking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from core.actor import Actor
from core.errors import Conflict, Forbidden, InvalidInput, NotFound, VersionConflict
from core.results import WriteResult
from governance import access, policy
from governance.modes import WriteOutcome
from memories import limits, services
from memories.models import Memory, MemoryStats

# Fields of the merged memory a curator may write in the merge request itself.
MERGE_TEXT_FIELDS = ("title", "content", "summary")


@dataclass
class MergeResult:
    # The target's edit: the merged memory, its diff, what redaction removed, whether kept.
    write: WriteResult[Memory]
    merged: list[str]
    # Phrases, tags and training examples that did not fit the entry's limits; they stay
    # readable in the archived sources.
    dropped: dict[str, list[Any]] = field(default_factory=dict)


@dataclass
class ResolveResult:
    kept: Memory
    superseded: Memory


def _invalid(name: str, message: str) -> InvalidInput:
    return InvalidInput(message, fields={name: [message]})


def _lock_for_curation(actor: Actor, ids: list[str]) -> dict[str, Memory]:
    """Every memory in `ids`, row-locked in pk order; 404 for one the actor cannot see,
    403 for one it sees but may not curate."""
    queryset = Memory.objects.select_for_update(of=("self",)).select_related("space", "stats")
    found = {m.id: m for m in access.restrict(queryset, actor).filter(pk__in=sorted(ids)).order_by("pk")}
    for memory_id in ids:
        memory = found.get(memory_id)
        if memory is None:
            raise NotFound(f"No memory '{memory_id}'.")
        if not access.can(actor, "curate", memory.space, memory):
            raise Forbidden(f"You may not curate memory '{memory_id}'.")
    return found


def _refuse_unless_stored(actor: Actor, memory: Memory) -> None:
    """Curation rewrites several memories at once; it is not offered where nothing is kept."""
    if policy.write_outcome(actor, memory.space) is not WriteOutcome.STORE:
        raise Conflict("Curation is not available in incognito mode: nothing would be kept.",
                       fields={"mode": ["incognito"]})


def _union(first: list[Any], others: list[list[Any]], *, limit: int,
           key=lambda value: value) -> tuple[list[Any], list[Any]]:
    """`first` then what the others add, without repeats; and what did not fit `limit`."""
    merged: list[Any] = []
    seen: set[Any] = set()
    for value in [*first, *(v for values in others for v in values)]:
        marker = key(value)
        if marker in seen:
            continue
        seen.add(marker)
        merged.append(value)
    return merged[:limit], merged[limit:]


@transaction.atomic
def memory_merge(*, actor: Actor, target_id: str, source_ids: list[str], expected_version: int,
                 changes: dict[str, Any] | None = None, reason: str = "") -> MergeResult:
    """Merge `source_ids` into `target_id`: one memory that says it all.

    The target keeps its id and gains a version holding the union of the canonical
    phrases, tags and training examples (its own first), the highest confidence, and any
    `changes` (title, content, summary) the curator wrote for the merged text. Each source
    is marked superseded by the target and archived, so it leaves lists and recall but
    stays restorable. Usage and access counts add up on the target.

    Raises InvalidInput (400) for an empty or self-referencing source list or a source in
    another space, VersionConflict (409) when the target moved past `expected_version`,
    NotFound / Forbidden through the access gateway.
    """
    sources = list(dict.fromkeys(source_ids))
    if not sources:
        raise _invalid("sources", "Name at least one memory to merge.")
    if target_id in sources:
        raise _invalid("sources", "A memory cannot be merged into itself.")
    unknown = sorted(set(changes or {}) - set(MERGE_TEXT_FIELDS))
    if unknown:
        raise _invalid(unknown[0], f"A merge may set only {', '.join(MERGE_TEXT_FIELDS)}.")
    locked = _lock_for_curation(actor, [target_id, *sources])
    target = locked[target_id]
    _refuse_unless_stored(actor, target)
    if target.version != expected_version:
        raise VersionConflict(expected=expected_version, current=target.version)
    for index, source_id in enumerate(sources):
        source = locked[source_id]
        if source.space_id != target.space_id:
            raise _invalid(f"sources[{index}]", f"Memory '{source_id}' is in another space.")
        if source.superseded_by_id and source.superseded_by_id != target_id:
            raise _invalid(f"sources[{index}]",
                           f"Memory '{source_id}' is already superseded by '{source.superseded_by_id}'.")

    others = [locked[s] for s in sources]
    phrases, dropped_phrases = _union(list(target.canonical_phrases),
                                      [list(m.canonical_phrases) for m in others],
                                      limit=limits.PHRASES_COUNT[1])
    tags, dropped_tags = _union(list(target.tags), [list(m.tags) for m in others],
                                limit=limits.TAGS_COUNT[1])
    examples, dropped_examples = _union(list(target.training_examples or []),
                                        [list(m.training_examples or []) for m in others],
                                        limit=limits.TRAINING_EXAMPLES_MAX, key=lambda e: e.get("id"))
    confidence = max(m.stats.confidence for m in [target, *others])
    merged_changes: dict[str, Any] = {"canonical_phrases": phrases, "tags": tags,
                                      "training_examples": examples, "confidence_score": confidence,
                                      **(changes or {})}
    why = reason or f"merged {', '.join(sources)}"
    write = services.memory_update(actor=actor, memory_id=target_id, expected_version=expected_version,
                                   changes=merged_changes, reason=why, audit_action="merge")
    for source in others:
        supersede(actor, source, by=target_id, reason=f"merged into {target_id}")
    _add_up_counters(target_id, sources)
    write.instance.stats.refresh_from_db()
    dropped = {name: values for name, values in (("canonical_phrases", dropped_phrases),
                                                 ("tags", dropped_tags),
                                                 ("training_examples", dropped_examples)) if values}
    return MergeResult(write=write, merged=sources, dropped=dropped)


def supersede(actor: Actor, memory: Memory, *, by: str, reason: str) -> None:
    if memory.superseded_by_id != by:
        services.memory_update(actor=actor, memory_id=memory.id, expected_version=memory.version,
                               changes={"superseded_by": by}, reason=reason)
    services.memory_archive(actor=actor, memory_id=memory.id, reason=reason)


def _add_up_counters(target_id: str, source_ids: list[str]) -> None:
    stats = list(MemoryStats.objects.filter(memory_id__in=[target_id, *source_ids]))
    target = next(s for s in stats if s.memory_id == target_id)
    merged = [s for s in stats if s.memory_id != target_id]
    target.usage_count += sum(s.usage_count for s in merged)
    target.access_count += sum(s.access_count for s in merged)
    times = [t for t in [target.last_used_at, *(s.last_used_at for s in merged)] if t]
    target.last_used_at = max(times) if times else None
    times = [t for t in [target.last_accessed_at, *(s.last_accessed_at for s in merged)] if t]
    target.last_accessed_at = max(times) if times else None
    target.save(update_fields=["usage_count", "access_count", "last_used_at", "last_accessed_at"])


@transaction.atomic
def memory_conflict_resolve(*, actor: Actor, memory_id: str, other_id: str, keep: str,
                            reason: str = "") -> ResolveResult:
    """Settle a conflict recall flagged between two memories (its `clarify_conflict`
    follow-up): the one kept stays, the other is marked superseded by it and archived.

    `keep` is "this" (`memory_id`) or "other" (`other_id`). Both must be in one space.
    """
    if keep not in ("this", "other"):
        raise _invalid("keep", "Must be 'this' or 'other'.")
    if other_id == memory_id:
        raise _invalid("with", "A memory does not conflict with itself.")
    locked = _lock_for_curation(actor, [memory_id, other_id])
    kept, superseded = ((locked[memory_id], locked[other_id]) if keep == "this"
                        else (locked[other_id], locked[memory_id]))
    if kept.space_id != superseded.space_id:
        raise _invalid("with", f"Memory '{other_id}' is in another space.")
    if kept.superseded_by_id == superseded.id:
        raise Conflict(f"Memory '{kept.id}' is itself superseded by '{superseded.id}'; restore it first.",
                       fields={"keep": ["The memory to keep is superseded by the other one."]})
    _refuse_unless_stored(actor, kept)
    supersede(actor, superseded, by=kept.id, reason=reason or f"conflict resolved in favour of {kept.id}")
    superseded.refresh_from_db()
    return ResolveResult(kept=kept, superseded=superseded)
