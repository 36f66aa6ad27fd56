"""Writes and workflows for spaces and memories.

Every write normalises, fills suggestions, validates against the SAM limits, keeps the
version history, refreshes the full-text vector and, once the transaction commits,
enqueues embedding. Permission checks go through governance.access.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from governance import access, policy, privacy
from governance.crypto import datakeys, keyed_digest, search
from governance.modes import WriteOutcome
from memories import entry
from memories.models import EmbeddingStatus, Memory, MemoryStats, MemoryVersion, Space
from memories.signals import memories_changed
from samsite.api.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    ModeRefusesWrites,
    NotFound,
    TooManyAttempts,
    VersionConflict,
)

logger = logging.getLogger(__name__)

SEARCH_CONFIG = "english"


# --- spaces ---------------------------------------------------------------------------

SPACE_SETTINGS = ("name", "kind", "description", "mode", "retention_days", "redaction_allowlist")


@transaction.atomic
def space_create(*, actor, slug: str, name: str, kind: str, description: str = "",
                 **options: Any) -> Space:
    """Create a space; a user who creates one becomes its owner.

    Raises Forbidden for a token narrowed to named spaces or capped below owner
    (governance.access.can_create_spaces), Conflict for a slug that is taken (whether
    the caller can see that space or not) and TooManyAttempts for a user refused
    SLUG_REFUSALS_PER_HOUR times within the hour.
    """
    from governance.roles import Role
    from governance.services import membership_grant

    if not access.can_create_spaces(actor):
        raise Forbidden("This token is limited to named spaces or to a role below owner, "
                        "so it may not create spaces.")
    refusals = _slug_refusals_key(actor)
    if refusals is not None and (cache.get(refusals) or 0) >= SLUG_REFUSALS_PER_HOUR:
        raise TooManyAttempts("Too many slugs that are not available were tried; try again later.")
    if Space.objects.filter(slug=slug).exists():
        _count_slug_refusal(refusals)
        raise Conflict("This slug is not available; choose another.", fields={"slug": ["Not available."]})
    space = Space(slug=slug, name=name.strip(), kind=kind, description=description.strip())
    _set_space_options(space, options)
    _redact_description(space)
    space.full_clean()
    space.save()
    _audit("create", actor=actor, space=space, target=space, after=_space_state(space))
    if access.user_or_none(actor) is not None:
        membership_grant(actor=actor, space=space, user=actor, role=Role.OWNER)
    # Superusers (and SYSTEM) hold every space: their memoised rights lack this one.
    access.forget_rights()
    return space


# A slug names one space for the whole install, so whether a slug is taken is something
# anyone who may create spaces can learn by trying it. The refusal says no more than that,
# in the same words for a space the caller can see and one it cannot, and a user refused
# this often within an hour may not create spaces until the hour is over, so hidden slugs
# cannot be guessed by the thousand (docs/security.md, "What a caller can learn by probing").
# Counted in the default cache: per web process unless SAM_CACHE_URL names a shared one.
SLUG_REFUSALS_PER_HOUR = 20


def _slug_refusals_key(actor) -> str | None:
    user = access.user_or_none(actor)
    return f"sam:slug-refusals:{user.pk}" if user is not None else None


def _count_slug_refusal(key: str | None) -> None:
    if key is None:
        return
    # add() starts the hour at the first refusal; incr() never moves it.
    cache.add(key, 0, timeout=3600)
    try:
        cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.set(key, 1, timeout=3600)


@transaction.atomic
def space_update(*, actor, slug: str, changes: dict[str, Any]) -> Space:
    space = access.access_space(actor, slug=slug, action="manage")
    before = _space_state(space)
    _set_space_options(space, changes)
    if "description" in changes:
        _redact_description(space)
    space.full_clean()
    space.save()
    after = _space_state(space)
    if after != before:
        action = "mode_change" if before["mode"] != after["mode"] else "edit"
        _audit(action, actor=actor, space=space, target=space, before=before, after=after)
        announce_change([space.pk])
    return space


def _set_space_options(space: Space, changes: dict[str, Any]) -> None:
    for name in SPACE_SETTINGS:
        if name in changes:
            value = changes[name]
            if name == "redaction_allowlist":
                value = sorted({str(v).strip() for v in value if str(v).strip()})
            setattr(space, name, value.strip() if isinstance(value, str) else value)


def _redact_description(space: Space) -> None:
    """A description is free text like a memory's: redacted, then sealed by the model."""
    values = {"description": space.description or ""}
    privacy.redact_fields(values, fields=["description"], allowlist=space.redaction_allowlist)
    space.description = values["description"]


def _space_state(space: Space) -> dict[str, Any]:
    return {name: getattr(space, name) for name in SPACE_SETTINGS}


def _audit(action: str, **kwargs: Any) -> None:
    from governance.audit.services import audit_record

    audit_record(action, **kwargs)


# --- entry state <-> model ------------------------------------------------------------

def memory_state(memory: Memory) -> dict[str, Any]:
    """The versioned fields of `memory` in the API's shape."""
    stats = getattr(memory, "stats", None)
    return {
        "title": memory.title,
        "content": memory.content,
        "summary": memory.summary,
        "canonical_phrases": list(memory.canonical_phrases),
        "tags": list(memory.tags),
        "memory_type": memory.memory_type,
        "kind": memory.kind,
        "priority": memory.priority,
        "reliability": memory.reliability,
        "importance": memory.importance,
        "confidence_score": stats.confidence if stats else entry.DEFAULTS["confidence_score"],
        "source": memory.source,
        "occurred_at": memory.occurred_at,
        "context_window": memory.context_window,
        "decay_policy": memory.decay_policy,
        "metadata": memory.metadata,
        "training_examples": memory.training_examples,
        "superseded_by": memory.superseded_by_id,
    }


def _apply_state(memory: Memory, state: dict[str, Any]) -> None:
    for name in ("title", "content", "summary", "canonical_phrases", "tags", "memory_type",
                 "kind", "priority", "reliability", "importance", "occurred_at",
                 "context_window", "decay_policy", "metadata", "training_examples"):
        setattr(memory, name, state[name])
    memory.superseded_by_id = state["superseded_by"]
    memory.source_type = state["source"]["type"]
    memory.source_ref = state["source"]["ref"]
    memory.source_uri = state["source"]["uri"]
    # Keyed hashes: equal texts in a space still compare equal, but a dump cannot be
    # searched for a guessed text.
    memory.content_hash = keyed_digest(memory.space_id, state["content"])
    target = keyed_digest(memory.space_id, entry.embedding_text(state))
    if target != memory.embedding_input_hash:
        memory.embedding_input_hash = target
        memory.embedding_status = EmbeddingStatus.PENDING
        memory.embedding_attempts = 0
        memory.embedding_error = ""


def _parse_occurred_at(state: dict[str, Any]) -> None:
    value = state.get("occurred_at")
    if isinstance(value, str):
        parsed = parse_datetime(value)
        if parsed is None:
            raise InvalidInput("Invalid date.", fields={"occurred_at": ["Not an ISO 8601 date-time."]})
        state["occurred_at"] = parsed


def _check_superseded_by(state: dict[str, Any], *, actor, space: Space, self_id: str | None) -> dict:
    target = state.get("superseded_by")
    if not target:
        state["superseded_by"] = None
        return {}
    if target == self_id:
        return {"superseded_by": ["A memory cannot supersede itself."]}
    # Through the gateway: a memory the caller may not see answers like one that is not there.
    if not access.restrict(Memory.objects.filter(pk=target, space=space), actor).exists():
        return {"superseded_by": [f"No memory '{target}' in space '{space.slug}'."]}
    return {}


def _index(memories: list[tuple[Memory, dict[str, Any]]]) -> None:
    """Write the keyed full-text tokens and phrase tokens of freshly saved memories."""
    search.write_index([
        (memory.id, datakeys.active_key_id(memory.space_id), state) for memory, state in memories
    ])


def announce_change(space_ids) -> None:
    """Tell caches (recall results) that these spaces changed, once the write commits."""
    ids = sorted({int(i) for i in space_ids})
    if ids:
        transaction.on_commit(lambda: memories_changed.send(sender=Memory, space_ids=ids))


# Seconds before the cluster gives up on an embedding job and frees its worker (and, with
# its connection, the job's row locks): sooner than the cluster-wide timeout.
EMBED_TASK_TIMEOUT = 120


def enqueue_embedding(memory_ids: list[str]) -> None:
    """Embed after commit: the worker must see the rows, and a rollback must not embed."""
    if not memory_ids:
        return
    from django_q.tasks import async_task

    ids = list(memory_ids)
    transaction.on_commit(
        lambda: async_task("memories.tasks.memory_embed", memory_ids=ids, attempt=1,
                           task_name=f"embed {len(ids)} memories", group="embedding",
                           timeout=EMBED_TASK_TIMEOUT)
    )


# --- create (single and bulk share one path) ------------------------------------------

@dataclass
class PreparedRow:
    index: int
    state: dict[str, Any] = field(default_factory=dict)
    space: Space | None = None
    memory_id: str | None = None
    suggested: list[str] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)
    redaction_report: list[dict[str, Any]] = field(default_factory=list)
    outcome: WriteOutcome = WriteOutcome.STORE
    forbidden: bool = False


@dataclass
class BulkResult:
    rows: list[PreparedRow]
    created: list[Memory]
    # Valid rows an incognito mode answered for but did not keep.
    discarded: list[Memory] = field(default_factory=list)

    @property
    def failed(self) -> list[PreparedRow]:
        return [row for row in self.rows if row.errors]


def _prepare_new(index: int, data: dict[str, Any], *, actor, spaces: dict[str, Space],
                 writable: set[str]) -> PreparedRow:
    row = PreparedRow(index=index)
    data = dict(data)
    slug = data.pop("space", None)
    row.memory_id = data.pop("id", None)
    security_context = data.pop("security_context", None) or {}
    row.space = spaces.get(slug) if slug else None
    if row.space is None:
        row.errors["space"] = [f"No space '{slug}'." if slug else "This field is required."]
    elif slug not in writable:
        # Visible but read-only for this caller: say so (403), unlike a space it cannot see.
        row.forbidden = True
        row.errors["space"] = [f"You may not add memories to space '{slug}'."]
    else:
        row.outcome = policy.policy(actor, row.space).write
        if row.outcome is WriteOutcome.REFUSE:
            row.errors["space"] = [policy.refusal_message(actor, row.space)]
    state = {
        **copy.deepcopy(entry.DEFAULTS),
        "context_window": None, "decay_policy": None, "summary": "", "canonical_phrases": [],
        "tags": [],
        **data,
    }
    state = entry.normalise(state)
    # Before suggestions, so a summary or phrase derived from the content is clean too.
    row.redaction_report = _redact(state, space=row.space, security_context=security_context)
    try:
        _parse_occurred_at(state)
    except InvalidInput as exc:
        row.errors.update(exc.fields)
    known = (lambda words, space=row.space: known_tags(space=space, words=words)) if row.space else None
    row.suggested = entry.fill_suggestions(state, explicit=set(data), known_tags=known)
    row.errors.update(entry.validate(state))
    if row.space is not None:
        row.errors.update(_check_superseded_by(state, actor=actor, space=row.space,
                                               self_id=row.memory_id))
    row.state = state
    return row


REDACTED_FIELDS = ("title", "content", "summary", "canonical_phrases", "tags", "metadata",
                   "training_examples", "context_window", "source")


def _redact(state: dict[str, Any], *, space: Space | None, security_context: dict[str, Any],
            metadata: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Redact PII from every storage-bound field of `state` in place; returns the report.

    Public figures come from `metadata` when given (an edit that leaves the metadata as
    stored), else from the metadata in `state`.
    """
    allowlist = [*(space.redaction_allowlist if space else []),
                 *(security_context.get("allowlist") or [])]
    return privacy.redact_fields(
        state, fields=[f for f in REDACTED_FIELDS if f in state], allowlist=allowlist,
        public_figures=privacy.public_figures_of(
            state["metadata"] if "metadata" in state or metadata is None else metadata),
    )


def known_tags(*, space: Space, words: list[str]) -> set[str]:
    """Which of `words` are tags already in `space`: on its memories or restricted.

    The only tags SAM suggests. Tags are plaintext, so a suggestion may name a label
    someone chose for the space, never a word copied from the content (docs/security.md).
    The overlap test (&&) runs on the tags GIN index.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tag FROM governance_restrictedtag WHERE space_id = %s AND tag = ANY(%s) "
            "UNION SELECT t.tag FROM memories_memory m CROSS JOIN LATERAL unnest(m.tags) AS t(tag) "
            "WHERE m.space_id = %s AND m.tags && %s::varchar[] AND t.tag = ANY(%s)",
            [space.pk, words, space.pk, words, words],
        )
        return {row[0] for row in cursor.fetchall()}


def _readable_spaces_by_slug(actor, slugs: set[str]) -> tuple[dict[str, Space], set[str]]:
    """Spaces among `slugs` the actor may read, and the slugs of those it may also write."""
    granted = access.rights(actor)
    spaces = {s.slug: s for s in Space.objects.filter(slug__in=slugs, pk__in=list(granted))}
    writable = {slug for slug, s in spaces.items() if granted[s.pk].allows("write")}
    return spaces, writable


def _insert(rows: list[PreparedRow], *, actor) -> list[Memory]:
    """Insert prepared, valid rows in three bulk statements plus one for search vectors."""
    now = timezone.now()
    memories = []
    for row in rows:
        memory = Memory(space=row.space, created_by=access.user_or_none(actor))
        if row.memory_id:
            memory.id = row.memory_id
        _apply_state(memory, row.state)
        memory.created_at = memory.updated_at = now
        memories.append(memory)
    Memory.objects.bulk_create(memories)
    MemoryStats.objects.bulk_create(
        MemoryStats(memory=m, confidence=row.state["confidence_score"])
        for m, row in zip(memories, rows, strict=True)
    )
    MemoryVersion.objects.bulk_create(
        MemoryVersion(memory=m, version=1, snapshot=entry.snapshot(row.state), changes=[],
                      reason="created", actor=access.user_or_none(actor))
        for m, row in zip(memories, rows, strict=True)
    )
    for memory, row in zip(memories, rows, strict=True):
        _audit("create", actor=actor, space=memory.space, target=memory,
               after={"version": 1, **entry.snapshot(row.state)}, digest_text=True)
    ids = [m.id for m in memories]
    _index([(m, row.state) for m, row in zip(memories, rows, strict=True)])
    enqueue_embedding(ids)
    announce_change(m.space_id for m in memories)
    return memories


def memory_bulk_create(*, actor, items: list[dict[str, Any]], atomic: bool = False) -> BulkResult:
    """Create many memories; report every row; keep the valid ones unless `atomic`.

    With atomic=True nothing is written when any row fails.
    """
    spaces, writable = _readable_spaces_by_slug(actor, {i.get("space") for i in items if i.get("space")})
    rows = [_prepare_new(index, item, actor=actor, spaces=spaces, writable=writable)
            for index, item in enumerate(items)]

    requested = [r.memory_id for r in rows if r.memory_id]
    taken = set(Memory.objects.filter(pk__in=requested).values_list("pk", flat=True))
    seen: set[str] = set()
    for row in rows:
        if row.memory_id and (row.memory_id in taken or row.memory_id in seen):
            row.errors.setdefault("id", []).append(f"A memory '{row.memory_id}' already exists.")
        if row.memory_id:
            seen.add(row.memory_id)

    valid = [row for row in rows if not row.errors]
    if atomic and len(valid) != len(rows):
        return BulkResult(rows=rows, created=[])
    kept = [row for row in valid if row.outcome is WriteOutcome.STORE]
    with transaction.atomic():
        created = _insert(kept, actor=actor) if kept else []
    for memory, row in zip(created, kept, strict=True):
        memory.redaction_report = row.redaction_report
    discarded = [_unsaved(row, actor=actor) for row in valid if row.outcome is WriteOutcome.DISCARD]
    return BulkResult(rows=rows, created=created, discarded=discarded)


def _unsaved(row: PreparedRow, *, actor) -> Memory:
    """The memory a row would have made, built in memory only (incognito mode)."""
    memory = Memory(space=row.space, created_by=access.user_or_none(actor))
    if row.memory_id:
        memory.id = row.memory_id
    _apply_state(memory, row.state)
    memory.created_at = memory.updated_at = timezone.now()
    # Serializers read the counters through memory.stats; give them an unsaved one.
    Memory.stats.related.set_cached_value(memory, MemoryStats(memory=memory,
                                                              confidence=row.state["confidence_score"]))
    memory.redaction_report = row.redaction_report
    return memory


def memory_create(*, actor, data: dict[str, Any]) -> tuple[Memory, list[str]]:
    """Create one memory. Returns it and the names of fields SAM suggested."""
    result = memory_bulk_create(actor=actor, items=[data], atomic=True)
    row = result.rows[0]
    if row.errors:
        if row.forbidden:
            raise Forbidden(row.errors["space"][0], fields={"space": row.errors["space"]})
        if row.outcome is WriteOutcome.REFUSE:
            raise ModeRefusesWrites(row.errors["space"][0])
        if "id" in row.errors and len(row.errors) == 1:
            raise Conflict(row.errors["id"][0], fields=row.errors)
        if "space" in row.errors and row.space is None and data.get("space"):
            raise NotFound(row.errors["space"][0], fields={"space": row.errors["space"]})
        raise InvalidInput("The memory has invalid fields.", fields=row.errors)
    return (result.created or result.discarded)[0], row.suggested


# --- edit, versions -------------------------------------------------------------------

def _locked_memory(actor, memory_id: str, action: access.Action = "edit") -> Memory:
    queryset = Memory.objects.select_for_update(of=("self",)).select_related("space", "stats")
    return access.access_object(queryset, actor, pk=memory_id, action=action, label="memory")


@transaction.atomic
def memory_update(*, actor, memory_id: str, expected_version: int, changes: dict[str, Any],
                  reason: str = "", audit_action: str = "edit") -> tuple[Memory, list[dict[str, Any]]]:
    """Apply `changes` to the memory at `expected_version`; a new version when anything changed.

    Raises VersionConflict when the memory has moved on. Returns the memory and the
    changelog diff (empty when the edit changed nothing).
    """
    memory = _locked_memory(actor, memory_id)
    outcome = policy.write_outcome(actor, memory.space)
    if memory.version != expected_version:
        raise VersionConflict(expected=expected_version, current=memory.version)
    before = memory_state(memory)
    changes = dict(changes)
    security_context = changes.pop("security_context", None) or {}
    changes = entry.normalise(changes)
    # An edit that does not resend the metadata keeps the stored one, and with it the
    # public figures whose names redaction must leave alone.
    memory.redaction_report = _redact(changes, space=memory.space, security_context=security_context,
                                      metadata=before["metadata"])
    after = {**before, **changes}
    _parse_occurred_at(after)
    # Tags are never re-suggested on edit: an empty list there is the curator's choice.
    entry.fill_suggestions(after, explicit=set(changes) | {"tags"})
    errors = entry.validate(after)
    if "superseded_by" in changes:
        errors.update(_check_superseded_by(after, actor=actor, space=memory.space, self_id=memory.id))
    if errors:
        raise InvalidInput("The edit has invalid fields.", fields=errors)
    changelog = entry.diff(before, after, reason=reason or "edited")
    if not changelog:
        return memory, []
    _apply_state(memory, after)
    memory.version += 1
    memory.save()
    if after["confidence_score"] != before["confidence_score"]:
        MemoryStats.objects.filter(memory=memory).update(confidence=after["confidence_score"])
        memory.stats.confidence = after["confidence_score"]
    MemoryVersion.objects.create(
        memory=memory, version=memory.version, snapshot=entry.snapshot(after),
        changes=changelog, reason=reason or "edited", actor=access.user_or_none(actor),
    )
    _index([(memory, after)])
    if memory.embedding_status == EmbeddingStatus.PENDING:
        enqueue_embedding([memory.id])
    announce_change([memory.space_id])
    _audit(audit_action, actor=actor, space=memory.space, target=memory, changes=changelog,
           before={"version": memory.version - 1}, after={"version": memory.version},
           note=reason or "edited", digest_text=True)
    _discard_if(outcome, memory)
    return memory, changelog


def _discard_if(outcome: WriteOutcome, memory: Memory) -> None:
    """Incognito: the caller gets the answer, the surrounding atomic block rolls back."""
    if outcome is WriteOutcome.DISCARD:
        transaction.set_rollback(True)
        memory.persisted = False


def memory_version_restore(*, actor, memory_id: str, version: int,
                           expected_version: int | None = None) -> tuple[Memory, list[dict]]:
    """Make the state of `version` current again, as a new version."""
    with transaction.atomic():
        memory = _locked_memory(actor, memory_id, "curate")
        old = MemoryVersion.objects.filter(memory=memory, version=version).first()
        if old is None:
            raise NotFound(f"Memory '{memory_id}' has no version {version}.")
        current = memory.version if expected_version is None else expected_version
        return memory_update(
            actor=actor, memory_id=memory_id, expected_version=current,
            changes=dict(old.snapshot), reason=f"restored version {version}",
            audit_action="version_restore",
        )


# --- archive, restore, delete ---------------------------------------------------------

def _archive_diff(before: bool, after: bool, reason: str) -> list[dict[str, Any]]:
    if before == after:
        return []
    return [{"path": "archive_flag", "before": before, "after": after, "reason": reason}]


@transaction.atomic
def memory_archive(*, actor, memory_id: str, reason: str = "") -> tuple[Memory, list[dict]]:
    """Soft-delete: hidden from default lists and recall, kept, restorable. Idempotent.

    Archiving is lifecycle, not content, so it does not bump the version: an edit
    prepared before the archive still applies after a restore.
    """
    memory = _locked_memory(actor, memory_id, "curate")
    outcome = policy.write_outcome(actor, memory.space)
    changelog = _archive_diff(memory.archived, True, reason or "archived")
    if changelog:
        memory.archived = True
        memory.archived_at = timezone.now()
        memory.archive_reason = reason
        memory.save(update_fields=["archived", "archived_at", "archive_reason", "updated_at"])
        announce_change([memory.space_id])
        _audit("archive", actor=actor, space=memory.space, target=memory, changes=changelog,
               after={"version": memory.version}, note=reason, digest_text=True)
        _discard_if(outcome, memory)
    return memory, changelog


@transaction.atomic
def memory_unarchive(*, actor, memory_id: str, reason: str = "") -> tuple[Memory, list[dict]]:
    memory = _locked_memory(actor, memory_id, "curate")
    outcome = policy.write_outcome(actor, memory.space)
    changelog = _archive_diff(memory.archived, False, reason or "restored")
    if changelog:
        memory.archived = False
        memory.archived_at = None
        memory.archive_reason = ""
        memory.save(update_fields=["archived", "archived_at", "archive_reason", "updated_at"])
        announce_change([memory.space_id])
        _audit("unarchive", actor=actor, space=memory.space, target=memory, changes=changelog,
               after={"version": memory.version}, note=reason, digest_text=True)
        _discard_if(outcome, memory)
    return memory, changelog


@transaction.atomic
def memory_delete(*, actor, memory_id: str) -> None:
    """Hard delete: the memory, its versions, counters and vector go in one statement."""
    memory = _locked_memory(actor, memory_id, "curate")
    outcome = policy.write_outcome(actor, memory.space)
    announce_change([memory.space_id])
    # The audit keeps that the memory existed and was deleted, not what it said.
    _audit("delete", actor=actor, space=memory.space, target=memory,
           before={"version": memory.version, "kind": memory.kind}, digest_text=True)
    memory.delete()
    _discard_if(outcome, memory)


# --- embeddings -----------------------------------------------------------------------

@dataclass
class EmbedOutcome:
    embedded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    retry_scheduled: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
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
    from django.db import connection

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
    from django.db import connection

    if not ids or connection.connection is None:
        return  # the connection is gone, and its locks with it
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(id)) FROM unnest(%s::text[]) AS id",
                       [EMBED_LOCK_CLASS, list(ids)])


def memories_embed(*, memory_ids: list[str], attempt: int = 1) -> EmbedOutcome:
    """Embed the given memories that still need it, in batches; schedule a retry on failure.

    Runs outside any transaction: the model call may take seconds, and each row's write
    checks that the text it embedded is still the memory's current text, so an edit made
    meanwhile is never overwritten by a stale vector (its own job embeds the new text).
    Memories another job is embedding right now are skipped: that job finishes them, or
    dies and releases them to the backlog drain.
    """
    locked = _lock_rows(sorted(set(memory_ids)))
    try:
        outcome = _embed_locked(locked, attempt=attempt)
    finally:
        _unlock_rows(locked)
    outcome.skipped = sorted(set(outcome.skipped) | (set(memory_ids) - set(locked)))
    return outcome


def _embed_locked(memory_ids: list[str], *, attempt: int) -> EmbedOutcome:
    from django.conf import settings

    from memories.embeddings.base import EmbeddingError
    from memories.embeddings.registry import get_provider

    config = settings.SAM_EMBEDDING
    outcome = EmbedOutcome()
    # Read after locking: a job that finished these rows a moment ago has made them ready.
    rows = list(
        Memory.objects.filter(pk__in=memory_ids)
        .exclude(embedding_status=EmbeddingStatus.READY)
        .values("id", "title", "content", "canonical_phrases", "embedding_input_hash")
        .order_by("id")
    )
    outcome.skipped = sorted(set(memory_ids) - {r["id"] for r in rows})
    if not rows:
        return outcome
    provider = get_provider()
    batch_size = max(1, int(config["BATCH_SIZE"]))
    for start in range(0, len(rows), batch_size):
        batch = rows[start:start + batch_size]
        texts = [entry.embedding_text(r) for r in batch]
        try:
            vectors = provider.embed(texts)
        except EmbeddingError as exc:
            _embedding_failed(batch, attempt=attempt, error=str(exc), outcome=outcome)
            continue
        now = timezone.now()
        # One commit per batch, not per row (the model call is done: nothing slow inside).
        with transaction.atomic():
            for row, vector in zip(batch, vectors, strict=True):
                # Only if the memory still holds the text this vector was computed from.
                written = Memory.objects.filter(
                    pk=row["id"], embedding_input_hash=row["embedding_input_hash"]
                ).update(
                    embedding=vector.tolist(), embedding_status=EmbeddingStatus.READY,
                    embedding_model=provider.name, embedded_at=now, embedding_error="",
                    embedding_attempts=attempt,
                )
                (outcome.embedded if written else outcome.skipped).append(row["id"])
    if outcome.embedded:
        spaces = Memory.objects.filter(pk__in=outcome.embedded).values_list("space_id", flat=True)
        memories_changed.send(sender=Memory, space_ids=sorted(set(spaces)))
    return outcome


def _ids_awaiting_retry() -> set[str]:
    """Memories whose failed embedding has a retry scheduled: the drain leaves them to it."""
    import ast

    from django_q.models import Schedule

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
    cutoff = timezone.now() - timezone.timedelta(seconds=grace_seconds)
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
    batches: int = 0
    backlog_left: bool = False
    slot: int | None = None


def _take_drain_slot(slots: int) -> int | None:
    from django.db import connection

    with connection.cursor() as cursor:
        for slot in range(slots):
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [DRAIN_SLOT_LOCK_CLASS, slot])
            if cursor.fetchone()[0]:
                return slot
    return None


def _release_drain_slot(slot: int) -> None:
    from django.db import connection

    if connection.connection is None:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [DRAIN_SLOT_LOCK_CLASS, slot])


def memories_embed_backlog(*, grace_seconds: float, batch: int, budget_seconds: float,
                           slots: int) -> DrainOutcome:
    """Embed pending memories whose job was lost, batch after batch, for up to `budget_seconds`.

    At most `slots` drains run at once (one per worker is enough to keep them all busy);
    a drain that finds every slot taken returns at once. `backlog_left` says the budget ran
    out with rows still waiting, so the caller can start another drain straight away.
    """
    import time

    outcome = DrainOutcome(slot=_take_drain_slot(slots))
    if outcome.slot is None:
        return outcome
    deadline = time.monotonic() + budget_seconds
    try:
        while True:
            if time.monotonic() >= deadline:
                outcome.backlog_left = True
                break
            ids = _claim_backlog(grace_seconds=grace_seconds, batch=batch, holders=slots)
            if not ids:
                break
            settled = 0
            try:
                for attempts, group in _by_attempts(ids).items():
                    result = _embed_locked(group, attempt=attempts + 1)
                    outcome.embedded += len(result.embedded)
                    settled += len(result.embedded) + len(result.retry_scheduled) + len(result.failed)
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
    from django.conf import settings
    from django_q.models import Schedule

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
    delay = config["RETRY_BASE_SECONDS"] * (2 ** (attempt - 1))
    retry_at = timezone.now() + timezone.timedelta(seconds=delay)
    Memory.objects.filter(pk__in=ids).update(embedding_attempts=attempt, embedding_error=error[:500])
    Schedule.objects.create(
        name=f"embed retry {attempt + 1} {ids[0]} +{len(ids) - 1}",
        func="memories.tasks.memory_embed",
        kwargs=repr({"memory_ids": ids, "attempt": attempt + 1}),
        schedule_type=Schedule.ONCE,
        next_run=retry_at,
    )
    outcome.retry_scheduled.extend(ids)
    outcome.retry_at = retry_at


def memories_reembed(*, space: Space | None = None, only_stale: bool = False) -> int:
    """Mark memories for embedding again (after a model change) and enqueue them."""
    from django.conf import settings

    from memories.embeddings.registry import get_provider

    queryset = Memory.objects.all()
    if space is not None:
        queryset = queryset.filter(space=space)
    if only_stale:
        queryset = queryset.exclude(embedding_model=get_provider().name, embedding_status="ready")
    ids = list(queryset.values_list("id", flat=True))
    batch = max(1, settings.SAM_EMBEDDING["BATCH_SIZE"]) * 16
    with transaction.atomic():
        queryset.filter(pk__in=ids).update(
            embedding_status=EmbeddingStatus.PENDING, embedding_attempts=0, embedding_error=""
        )
        for start in range(0, len(ids), batch):
            enqueue_embedding(ids[start:start + batch])
    return len(ids)
