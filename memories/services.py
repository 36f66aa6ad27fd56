"""Writes and workflows for spaces and memories.

Every write normalises, fills suggestions, validates against the SAM limits, keeps the
version history, refreshes the full-text vector and, once the transaction commits,
enqueues embedding. Permission checks go through governance.access.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.actor import Actor
from core.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    ModeRefusesWrites,
    NotFound,
    VersionConflict,
)
from core.jobs import enqueue_on_commit
from core.models import Space
from core.results import WriteResult
from core.signals import announce_change
from governance import access, policy, privacy
from governance.audit.services import AuditRecord, audit_record, audit_record_many
from governance.crypto import datakeys, keyed_digest
from governance.models import RestrictedTag
from governance.modes import WriteOutcome
from memories import enrichment, entry, selectors
from memories.embeddings.jobs import enqueue_embedding
from memories.entities import linking as entities
from memories.lifecycle import reinforce
from memories.models import EmbeddingStatus, Memory, MemoryStats, MemoryVersion
from memories.search_index import write_index

logger = logging.getLogger(__name__)


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


def _check_superseded_by(state: dict[str, Any], *, actor: Actor, space: Space, self_id: str | None) -> dict:
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
    write_index([
        (memory.id, datakeys.active_key_id(memory.space_id), state) for memory, state in memories
    ])


# --- create (single and bulk share one path) ------------------------------------------

@dataclass
class PreparedRow:
    index: int
    state: dict[str, Any] = field(default_factory=dict)
    space: Space | None = None
    memory_id: str | None = None
    suggested: list[str] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)
    # The fields the caller gave (the others may be suggested).
    given: set[str] = field(default_factory=set)
    redaction_report: list[dict[str, Any]] = field(default_factory=list)
    outcome: WriteOutcome = WriteOutcome.STORE
    # The same text is stored already (or earlier in the batch): that memory was
    # reinforced instead of adding a row (docs/lifecycle.md, "On write").
    reinforced: bool = False
    # Why the row cannot be written beyond its field errors, most specific first: the
    # error a single create raises (a bulk answer lists `errors` per row).
    refusals: list[DomainError] = field(default_factory=list)
    # The memory written (or, in incognito, built and not kept).
    memory: Memory | None = None

    def refuse(self, error: DomainError, *, field_name: str) -> None:
        self.errors.setdefault(field_name, []).append(error.message)
        self.refusals.append(error)


@dataclass
class BulkResult:
    rows: list[PreparedRow]
    created: list[Memory]
    # Valid rows an incognito mode answered for but did not keep.
    discarded: list[Memory] = field(default_factory=list)
    # Memories stored already that duplicate rows reinforced (one entry per such row).
    reinforced: list[Memory] = field(default_factory=list)

    @property
    def failed(self) -> list[PreparedRow]:
        return [row for row in self.rows if row.errors]


def _prepare_new(index: int, data: dict[str, Any], *, actor: Actor, spaces: dict[str, Space],
                 writable: set[str], memo: privacy.RedactionMemo) -> PreparedRow:
    row = PreparedRow(index=index)
    data = dict(data)
    slug = data.pop("space", None)
    row.memory_id = data.pop("id", None)
    security_context = data.pop("security_context", None) or {}
    row.space = spaces.get(slug) if slug else None
    if row.space is None and slug:
        message = f"No space '{slug}'."
        row.refuse(NotFound(message, fields={"space": [message]}), field_name="space")
    elif row.space is None:
        row.errors["space"] = ["This field is required."]
    elif slug not in writable:
        # Visible but read-only for this caller: say so (403), unlike a space it cannot see.
        message = f"You may not add memories to space '{slug}'."
        row.refuse(Forbidden(message, fields={"space": [message]}), field_name="space")
    else:
        row.outcome = policy.policy(actor, row.space).write
        if row.outcome is WriteOutcome.REFUSE:
            row.refuse(ModeRefusesWrites(policy.refusal_message(actor, row.space)), field_name="space")
    state = {
        **copy.deepcopy(entry.DEFAULTS),
        "context_window": None, "decay_policy": None, "summary": "", "canonical_phrases": [],
        "tags": [],
        **data,
    }
    state = entry.normalise(state)
    # Before suggestions, so a summary or phrase derived from the content is clean too.
    row.redaction_report = _redact(state, space=row.space, security_context=security_context, memo=memo)
    try:
        _parse_occurred_at(state)
    except InvalidInput as exc:
        row.errors.update(exc.fields)
    row.given = set(data)
    row.state = state
    return row


def _finish_new(row: PreparedRow, *, actor: Actor, known: dict[int, set[str]]) -> None:
    """Suggest what is missing and validate a row `_prepare_new` began; `known`: the tags
    each space holds among the rows' tag candidates (`_known_tags_of`)."""
    state = row.state
    accept = None
    if row.space is not None:
        have = known.get(row.space.pk, set())
        accept = lambda words: [word for word in words if word in have]  # noqa: E731
    row.suggested = entry.fill_suggestions(state, explicit=row.given, known_tags=accept)
    row.errors.update(entry.validate(state))
    if row.space is not None:
        row.errors.update(_check_superseded_by(state, actor=actor, space=row.space,
                                               self_id=row.memory_id))


def _known_tags_of(rows: list[PreparedRow]) -> dict[int, set[str]]:
    """The tags each space already holds among the tag candidates of the rows that will be
    given suggested tags: one query per space for the whole batch instead of one per row."""
    words: dict[int, set[str]] = {}
    spaces: dict[int, Space] = {}
    for row in rows:
        if row.space is None or not entry.wants_tag_suggestions(row.state, explicit=row.given):
            continue
        spaces[row.space.pk] = row.space
        words.setdefault(row.space.pk, set()).update(enrichment.tag_candidates(
            title=row.state.get("title", ""), content=row.state["content"]))
    return {pk: known_tags(space=spaces[pk], words=sorted(found)) for pk, found in words.items() if found}


REDACTED_FIELDS = ("title", "content", "summary", "canonical_phrases", "tags", "metadata",
                   "training_examples", "context_window", "source")


def _redact(state: dict[str, Any], *, space: Space | None, security_context: dict[str, Any],
            metadata: dict[str, Any] | None = None,
            memo: privacy.RedactionMemo | None = None) -> list[dict[str, Any]]:
    """Redact PII from every storage-bound field of `state` in place; returns the report.

    Public figures come from `metadata` when given (an edit that leaves the metadata as
    stored), else from the metadata in `state`. `memo`: texts the same request redacted
    already (privacy.RedactionMemo).
    """
    allowlist = [*(space.redaction_allowlist if space else []),
                 *(security_context.get("allowlist") or [])]
    return privacy.redact_fields(
        state, fields=[f for f in REDACTED_FIELDS if f in state], allowlist=allowlist,
        public_figures=privacy.public_figures_of(
            state["metadata"] if "metadata" in state or metadata is None else metadata),
        memo=memo,
    )


def known_tags(*, space: Space, words: list[str]) -> set[str]:
    """Which of `words` are tags already in `space`: on its memories or restricted.

    The only tags SAM suggests. Tags are plaintext, so a suggestion may name a label
    someone chose for the space, never a word copied from the content (docs/security.md).
    The overlap test (&&) runs on the tags GIN index.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tag FROM {RestrictedTag._meta.db_table} WHERE space_id = %s AND tag = ANY(%s) "
            f"UNION SELECT t.tag FROM {Memory._meta.db_table} m CROSS JOIN LATERAL unnest(m.tags) AS t(tag) "
            "WHERE m.space_id = %s AND m.tags && %s::varchar[] AND t.tag = ANY(%s)",
            [space.pk, words, space.pk, words, words],
        )
        return {row[0] for row in cursor.fetchall()}


def _readable_spaces_by_slug(actor: Actor, slugs: set[str]) -> tuple[dict[str, Space], set[str]]:
    """Spaces among `slugs` the actor may read, and the slugs of those it may also write."""
    granted = access.rights(actor)
    spaces = {s.slug: s for s in Space.objects.filter(slug__in=slugs, pk__in=list(granted))}
    writable = {slug for slug, s in spaces.items() if granted[s.pk].allows("write")}
    return spaces, writable


def _insert(rows: list[PreparedRow], *, actor: Actor, check: bool = True) -> list[Memory]:
    """Insert prepared, valid rows in three bulk statements plus one for search vectors.

    With `check`, each new memory is marked for the write checks (near duplicates,
    supersession) its space's policies ask for; they run once its vector is stored.
    """
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
        MemoryStats(memory=m, space_id=m.space_id, confidence=row.state["confidence_score"],
                    check_pending=check and _checks_wanted(m.space))
        for m, row in zip(memories, rows, strict=True)
    )
    # Both are read-only copies of the state: built once per row.
    snapshots = [entry.snapshot(row.state) for row in rows]
    MemoryVersion.objects.bulk_create(
        MemoryVersion(memory=m, version=1, snapshot=snapshot, changes=[],
                      reason="created", actor=access.user_or_none(actor))
        for m, snapshot in zip(memories, snapshots, strict=True)
    )
    audit_record_many([
        AuditRecord("create", actor=actor, space=memory.space, target=memory,
                    after={"version": 1, **snapshot}, digest_text=True)
        for memory, snapshot in zip(memories, snapshots, strict=True)
    ])
    ids = [m.id for m in memories]
    _index([(m, row.state) for m, row in zip(memories, rows, strict=True)])
    enqueue_embedding(ids)
    announce_change(m.space_id for m in memories)
    return memories


def _checks_wanted(space: Space) -> bool:
    return (space.near_duplicate_policy != "keep") or (space.supersession_policy != "off")


def memory_bulk_create(*, actor: Actor, items: list[dict[str, Any]], atomic: bool = False,
                       check_duplicates: bool = True) -> BulkResult:
    """Create many memories; report every row; keep the valid ones unless `atomic`.

    With atomic=True nothing is written when any row fails. With `check_duplicates` (the
    default; callers with their own identity rules, such as session cards, turn it off),
    a row whose text the space holds already reinforces that memory instead of adding a
    row, where the space's duplicate policy says so, and new memories are compared with
    what the space holds once their vectors are stored (memories.lifecycle.write_checks).
    """
    spaces, writable = _readable_spaces_by_slug(actor, {i["space"] for i in items if i.get("space")})
    memo: privacy.RedactionMemo = {}  # this request's only: see privacy.RedactionMemo
    rows = [_prepare_new(index, item, actor=actor, spaces=spaces, writable=writable, memo=memo)
            for index, item in enumerate(items)]
    known = _known_tags_of(rows)
    for row in rows:
        _finish_new(row, actor=actor, known=known)

    requested = [r.memory_id for r in rows if r.memory_id]
    taken = set(Memory.objects.filter(pk__in=requested).values_list("pk", flat=True))
    seen: set[str] = set()
    for row in rows:
        if row.memory_id and (row.memory_id in taken or row.memory_id in seen):
            message = f"A memory '{row.memory_id}' already exists."
            row.refuse(Conflict(message, fields={"id": [message]}), field_name="id")
        if row.memory_id:
            seen.add(row.memory_id)

    valid = [row for row in rows if not row.errors]
    if atomic and len(valid) != len(rows):
        return BulkResult(rows=rows, created=[])
    kept = [row for row in valid if row.outcome is WriteOutcome.STORE]
    with transaction.atomic():
        repeats = _duplicates_of(kept, actor=actor) if check_duplicates else {}
        fresh = [row for row in kept if row.index not in repeats]
        created = _insert(fresh, actor=actor, check=check_duplicates) if fresh else []
        for memory, row in zip(created, fresh, strict=True):
            row.memory = memory
        reinforced = _reinforce(kept, repeats, actor=actor)
    discarded: list[Memory] = []
    for row in valid:
        if row.outcome is WriteOutcome.DISCARD:
            row.memory = _unsaved(row, actor=actor)
            discarded.append(row.memory)
    return BulkResult(rows=rows, created=created, discarded=discarded, reinforced=reinforced)


def _duplicates_of(rows: list[PreparedRow], *, actor: Actor) -> dict[int, Memory | int]:
    """Rows whose text is stored already (memories.lifecycle.reinforce.repeats), by row index."""
    wanted = [(row.index, row.space, row.state["content"]) for row in rows
              if row.space is not None and row.space.duplicate_policy == "reinforce"]
    return reinforce.repeats(wanted, actor=actor)


def _reinforce(rows: list[PreparedRow], repeats: dict[int, Memory | int], *, actor: Actor) -> list[Memory]:
    """Reinforce the memory each repeated row names; the row answers with that memory."""
    by_index = {row.index: row for row in rows}
    reinforced = []
    for index, target in repeats.items():
        row = by_index[index]
        memory = by_index[target].memory if isinstance(target, int) else target
        assert memory is not None
        row.memory, row.reinforced = memory, True
        reinforced.append(memory)
    reinforce.reinforce_many(reinforced, actor=actor)
    return reinforced


def _unsaved(row: PreparedRow, *, actor: Actor) -> Memory:
    """The memory a row would have made, built in memory only (incognito mode)."""
    memory = Memory(space=row.space, created_by=access.user_or_none(actor))
    if row.memory_id:
        memory.id = row.memory_id
    _apply_state(memory, row.state)
    memory.created_at = memory.updated_at = timezone.now()
    # Serializers read the counters through memory.stats; give them an unsaved one.
    Memory.stats.related.set_cached_value(memory, MemoryStats(memory=memory, space_id=memory.space_id,
                                                              confidence=row.state["confidence_score"]))
    return memory


@dataclass
class BulkReport:
    """A bulk create as the API answers it, row by row in input order."""

    atomic: bool
    # [{index, ok: True, id, persisted, reinforced, redaction_report} | {index, ok: False, errors}]
    results: list[dict[str, Any]]
    # Why each failed row failed, by index: its shape first, then what the write found.
    errors: dict[int, dict[str, list[str]]]

    @property
    def refused(self) -> bool:
        """All or nothing, and a row failed: nothing was written."""
        return self.atomic and bool(self.errors)

    def summary(self) -> dict[str, Any]:
        created = sum(1 for row in self.results if row["ok"])
        return {"created": created, "reinforced": sum(1 for row in self.results if row.get("reinforced")),
                "failed": len(self.results) - created, "atomic": self.atomic, "results": self.results}


def memory_bulk_submit(*, actor: Actor, items: list[dict[str, Any]], invalid: dict[int, dict[str, list[str]]],
                       atomic: bool) -> BulkReport:
    """Create the rows of `items` whose shape is valid (`invalid`: the others' errors by index)
    and report every row: written, or why not.

    With atomic=True a row with a bad shape stops the write before it starts, and any other
    failure leaves nothing written (memory_bulk_create).
    """
    errors = dict(invalid)
    written: list[dict[str, Any]] = []
    if not (atomic and errors):
        valid = [(index, item) for index, item in enumerate(items) if index not in invalid]
        result = memory_bulk_create(actor=actor, items=[item for _, item in valid], atomic=atomic)
        for (index, _), row in zip(valid, result.rows, strict=True):
            if row.errors:
                errors[index] = row.errors
            elif row.memory is not None:
                written.append({"index": index, "ok": True, "id": row.memory.id,
                                "persisted": row.outcome is WriteOutcome.STORE, "reinforced": row.reinforced,
                                "redaction_report": row.redaction_report})
    failed = [{"index": index, "ok": False, "errors": found} for index, found in errors.items()]
    return BulkReport(atomic=atomic, results=sorted(written + failed, key=lambda row: row["index"]),
                      errors=errors)


def memory_create(*, actor: Actor, data: dict[str, Any], check_duplicates: bool = True,
                  read_back: bool = False) -> WriteResult[Memory]:
    """Create one memory (a bulk of one, all or nothing); or reinforce the one stored with
    the same text (`reinforced` in the result).

    With `read_back`, a kept memory comes back as `actor` may read it now
    (selectors.memory_read_back): what an API answer shows, at the cost of a read.
    """
    result = memory_bulk_create(actor=actor, items=[data], atomic=True, check_duplicates=check_duplicates)
    row = result.rows[0]
    if row.errors:
        raise _refusal_of(row)
    assert row.memory is not None
    persisted = row.outcome is WriteOutcome.STORE
    memory = row.memory
    if read_back and persisted:
        memory = selectors.memory_read_back(actor=actor, memory=memory)
    return WriteResult(memory, suggested=[] if row.reinforced else row.suggested,
                       redaction_report=row.redaction_report, persisted=persisted, reinforced=row.reinforced)


def _refusal_of(row: PreparedRow) -> DomainError:
    """The one error that answers a single create: who may not write first (403, 409), an id
    already taken when nothing else is wrong (409), a space not found (404), else 400."""
    for kind in (Forbidden, ModeRefusesWrites, Conflict, NotFound):
        for refusal in row.refusals:
            if type(refusal) is kind and (kind is not Conflict or set(row.errors) == {"id"}):
                return refusal
    return InvalidInput("The memory has invalid fields.", fields=row.errors)


# --- edit, versions -------------------------------------------------------------------

def _locked_memory(actor: Actor, memory_id: str, action: access.Action = "edit") -> Memory:
    queryset = Memory.objects.select_for_update(of=("self",)).select_related("space", "stats")
    return access.access_object(queryset, actor, pk=memory_id, action=action, label="memory")


@transaction.atomic
def memory_update(*, actor: Actor, memory_id: str, expected_version: int, changes: dict[str, Any],
                  reason: str = "", audit_action: str = "edit") -> WriteResult[Memory]:
    """Apply `changes` to the memory at `expected_version`; a new version when anything changed.

    Raises VersionConflict when the memory has moved on. The changelog is empty when the
    edit changed nothing.
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
    redaction_report = _redact(changes, space=memory.space, security_context=security_context,
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
        return WriteResult(memory, redaction_report=redaction_report)
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
        enqueue_embedding([memory.id])  # settled once embedded
    else:
        enqueue_on_commit("memories.tasks.memories_settle", memory_ids=[memory.id],
                          task_name=f"settle {memory.id}", group="settle")
    announce_change([memory.space_id])
    audit_record(audit_action, actor=actor, space=memory.space, target=memory, changes=changelog,
                 before={"version": memory.version - 1}, after={"version": memory.version},
                 note=reason or "edited", digest_text=True)
    return WriteResult(memory, changelog=changelog, redaction_report=redaction_report,
                       persisted=policy.keep_or_discard(outcome))


def memory_version_restore(*, actor: Actor, memory_id: str, version: int,
                           expected_version: int | None = None) -> WriteResult[Memory]:
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


def memory_archive(*, actor: Actor, memory_id: str, reason: str = "") -> WriteResult[Memory]:
    """Soft-delete: hidden from default lists and recall, kept, restorable. Idempotent.

    Archiving is lifecycle, not content, so it does not bump the version: an edit
    prepared before the archive still applies after a restore.
    """
    return _set_archived(actor, memory_id, archived=True, reason=reason)


def memory_unarchive(*, actor: Actor, memory_id: str, reason: str = "") -> WriteResult[Memory]:
    return _set_archived(actor, memory_id, archived=False, reason=reason)


@transaction.atomic
def _set_archived(actor: Actor, memory_id: str, *, archived: bool, reason: str) -> WriteResult[Memory]:
    memory = _locked_memory(actor, memory_id, "curate")
    outcome = policy.write_outcome(actor, memory.space)
    changelog = _archive_diff(memory.archived, archived, reason or ("archived" if archived else "restored"))
    if not changelog:
        return WriteResult(memory)
    memory.archived = archived
    memory.archived_at = timezone.now() if archived else None
    memory.archive_reason = reason if archived else ""
    memory.save(update_fields=["archived", "archived_at", "archive_reason", "updated_at"])
    announce_change([memory.space_id])
    audit_record("archive" if archived else "unarchive", actor=actor, space=memory.space, target=memory,
                 changes=changelog, after={"version": memory.version}, note=reason, digest_text=True)
    return WriteResult(memory, changelog=changelog, persisted=policy.keep_or_discard(outcome))


@transaction.atomic
def memory_delete(*, actor: Actor, memory_id: str) -> bool:
    """Hard delete: the memory, its versions, counters and vector go in one statement.
    Returns whether the delete is kept (False: incognito answered it and rolled it back)."""
    # The space's entity lock before the memory's row lock (the order linking takes them).
    entities.lock_spaces(Memory.objects.filter(pk=memory_id).values_list("space_id", flat=True))
    memory = _locked_memory(actor, memory_id, "remove")
    outcome = policy.write_outcome(actor, memory.space)
    announce_change([memory.space_id])
    # The audit keeps that the memory existed and was deleted, not what it said.
    audit_record("delete", actor=actor, space=memory.space, target=memory,
                 before={"version": memory.version, "kind": memory.kind}, digest_text=True)
    entities.release(memory.space_id, [memory.pk])
    memory.delete()
    return policy.keep_or_discard(outcome)
