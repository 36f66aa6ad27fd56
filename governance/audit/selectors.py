"""Audit timelines: a memory's or a space's audit events and recall events, newest first.

Both kinds are merged in the database (UNION ALL of (kind, id, time)), so a page is one
LIMIT/OFFSET query however the two streams interleave; only the page's rows are then
loaded. Recall events come from retrieval's RecallEvent, which keeps why each memory was
recalled; the audit log's own `recall` rows of those recalls are left out here, as they
would repeat them. An untracked recall has no RecallEvent, so its audit row is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import (
    BooleanField,
    CharField,
    Exists,
    F,
    Func,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)

from core.actor import Actor
from governance import access, roles
from governance.audit import digests
from governance.audit.models import AuditAction, AuditEvent
from governance.crypto import cipher
from governance.crypto.errors import KeyDestroyed

RECALL = AuditAction.RECALL.value
RECALL_EVENT = "recallevent"


class InArray(Func):
    """`value = ANY(array)`, for filter(): true when the array holds the value."""

    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):
        value, array = self.get_source_expressions()
        value_sql, value_params = compiler.compile(value)
        array_sql, array_params = compiler.compile(array)
        return f"{value_sql} = ANY({array_sql})", (*value_params, *array_params)


@dataclass(frozen=True)
class TimelineFilters:
    """`actions`: keep only these (empty: all; "recall" selects recall events).
    `after` is inclusive, `before` exclusive."""

    actions: tuple[str, ...] = ()
    after: datetime | None = None
    before: datetime | None = None

    def wants(self, action: str) -> bool:
        return not self.actions or action in self.actions


@dataclass
class Timeline:
    """A paginator-friendly sequence: count() and slicing, each slice loaded as items."""

    rows: QuerySet
    load: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]

    def count(self) -> int:
        return self.rows.count()

    def __getitem__(self, index: slice) -> list[dict[str, Any]]:
        return self.load(list(self.rows[index]))


# Governance sits below memories and retrieval and never names their models: memories
# registers Memory with the gateway (access.register_memories), and retrieval registers
# its recall events here as it starts (retrieval.apps), for the timelines to merge.
_recall_events: type[Model] | None = None


def register_recall_events(model: type[Model]) -> None:
    global _recall_events
    _recall_events = model


# type[Any]: governance never names these models, so it cannot know their fields.
def _memory_model() -> type[Any]:
    return access.memory_registry().model


def _recall_model() -> type[Any]:
    if _recall_events is None:
        raise ImproperlyConfigured("No recall event model registered: is 'retrieval' in INSTALLED_APPS?")
    return _recall_events


def memory_timeline(*, actor: Actor, memory_id: str, filters: TimelineFilters) -> Timeline:
    """The audit and recall events of one memory the actor may audit (else NotFound/Forbidden)."""
    memory = access.access_object(_memory_model().objects.all(), actor, pk=memory_id,
                                  action="audit", label="memory")
    audit = AuditEvent.objects.filter(target_type="memory", target_id=memory.pk)
    recall = _recall_model().objects.filter(memory_ids__contains=[memory.pk])

    def load(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _load(rows, actor=actor, recalled=lambda ids: {memory.pk} & set(ids))

    return Timeline(_merge(audit, recall, filters), load)


def space_timeline(*, actor: Actor, slug: str, filters: TimelineFilters) -> Timeline:
    """The audit events recorded in a space, and the recalls that returned its memories.

    Events about memories of the space that the actor may not see are left out; events
    about memories since deleted stay (there is nothing left to hide them by).
    """
    space = access.access_space(actor, slug=slug, action="audit")
    Memory = _memory_model()
    in_space = Memory.objects.filter(space_id=space.pk)
    visible = access.restrict(in_space, actor)
    hidden_ids = in_space.exclude(pk__in=visible.values("pk")).values("pk")
    audit = (AuditEvent.objects.filter(space_id=space.pk)
             .exclude(target_type="memory", target_id__in=Subquery(hidden_ids)))
    # Each recall of the space holds a handful of ids, so this is a few pk probes a row.
    returned_one = visible.filter(InArray(F("pk"), OuterRef("memory_ids")))
    recall = _recall_model().objects.filter(spaces__contains=[space.slug]).filter(Exists(returned_one))

    # A deleted memory can no longer say who may see it, so what it said (the payload) is
    # shown only to those who see everything in the space: owners.
    granted = access.rights(actor).get(space.pk)
    sees_all = granted is not None and granted.rank >= roles.RANK[roles.Role.OWNER]

    def conceal(rows: dict[int, AuditEvent]) -> set[int]:
        if sees_all:
            return set()
        memory_ids = {e.target_id for e in rows.values() if e.target_type == "memory"}
        existing = set(in_space.filter(pk__in=memory_ids).values_list("pk", flat=True))
        return {pk for pk, e in rows.items() if e.target_type == "memory" and e.target_id not in existing}

    def load(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _load(rows, actor=actor, recalled=lambda ids: set(visible.filter(pk__in=list(ids))
                                                                 .values_list("pk", flat=True)),
                     conceal=conceal)

    return Timeline(_merge(audit, recall, filters), load)


def audit_event_list(*, actor: Actor) -> QuerySet[AuditEvent]:
    """The audit events `actor` may read in the admin, by the timelines' rules.

    Events of spaces it may audit (owners, curators, auditors), less those about memories
    of such a space that it may not see. Events that belong to no space (tokens, users'
    modes, the system key) or to a deleted space have nobody left to ask, so only SYSTEM
    and superusers read those.
    """
    if access.sees_everything(actor):
        return AuditEvent.objects.all()
    auditable = auditable_space_ids(actor)
    in_spaces = _memory_model().objects.filter(space_id__in=auditable)
    hidden_ids = in_spaces.exclude(pk__in=access.restrict(in_spaces, actor).values("pk")).values("pk")
    return (AuditEvent.objects.filter(space_id__in=auditable)
            .exclude(target_type="memory", target_id__in=Subquery(hidden_ids)))


def auditable_space_ids(actor: Actor) -> list[int]:
    """Ids of the spaces whose audit events `actor` may read."""
    return sorted(pk for pk, granted in access.rights(actor).items() if granted.allows("audit"))


def audit_payload_readable(*, actor: Actor, event: AuditEvent) -> bool:
    """Whether `actor` may read what `event` recorded, as in a space timeline: an event
    about a memory since deleted shows its payload only to those who see everything in
    the space (owners), since a deleted memory can no longer say who may see it."""
    if access.sees_everything(actor) or event.target_type != "memory":
        return True
    if _memory_model().objects.filter(pk=event.target_id, space_id=event.space_id).exists():
        return True
    by_space = access.rights(actor)
    granted = None if event.space_id is None else by_space.get(event.space_id)
    return granted is not None and granted.rank >= roles.RANK[roles.Role.OWNER]


def _merge(audit: QuerySet, recall: QuerySet, filters: TimelineFilters) -> QuerySet:
    # A tracked recall's audit rows repeat its RecallEvent, which is shown instead; an
    # untracked one (a memory mode, or track: false) has no event, so its row stays.
    audit = audit.exclude(action=RECALL, target_type=RECALL_EVENT)
    if filters.actions:
        audit = audit.filter(action__in=filters.actions)
    audit = _between(audit, "at", filters)
    if not filters.wants(RECALL):
        recall = recall.none()
    recall = _between(recall, "created_at", filters)
    # Same annotation names and order on both sides, so the UNION's columns line up.
    rows = audit.order_by().annotate(
        kind=Value("audit", output_field=CharField()), event_id=F("id"), event_at=F("at"),
    ).values("kind", "event_id", "event_at")
    recalls = recall.order_by().annotate(
        kind=Value("recall", output_field=CharField()), event_id=F("id"), event_at=F("created_at"),
    ).values("kind", "event_id", "event_at")
    return rows.union(recalls, all=True).order_by("-event_at", "kind", "-event_id")


def _between(queryset: QuerySet, field_name: str, filters: TimelineFilters) -> QuerySet:
    if filters.after is not None:
        queryset = queryset.filter(**{f"{field_name}__gte": filters.after})
    if filters.before is not None:
        queryset = queryset.filter(**{f"{field_name}__lt": filters.before})
    return queryset


def _load(rows: list[dict[str, Any]], *, actor: Actor, recalled: Callable[[Iterable[str]], set[str]],
          conceal: Callable[[dict[int, AuditEvent]], set[int]] = lambda _: set()) -> list[dict[str, Any]]:
    """Turn a page of (kind, event_id) rows into timeline items, in the page's order.

    `recalled(ids)` says which of a recall's memory ids belong on this timeline. Nothing in
    an item names what `actor` may not see: links to hidden memories in payloads are
    blanked, and a recall lists only the spaces the actor may read.
    """
    audit_ids = [row["event_id"] for row in rows if row["kind"] == "audit"]
    recall_ids = [row["event_id"] for row in rows if row["kind"] == "recall"]
    audits = AuditEvent.objects.in_bulk(audit_ids) if audit_ids else {}
    recalls = (_recall_model().objects.select_related("actor").in_bulk(recall_ids)
               if recall_ids else {})
    shown = recalled({mid for event in recalls.values() for mid in event.memory_ids}) if recalls else set()
    readable_spaces = (set(access.spaces_visible(actor).values_list("slug", flat=True))
                       if recalls else set())
    concealed = conceal(audits) if audits else set()
    opened = {pk: _opened(event, concealed=pk in concealed) for pk, event in audits.items()}
    texts = _memory_texts(audits, opened)
    items = []
    for row in rows:
        if row["kind"] == "audit":
            items.append(_audit_item(audits[row["event_id"]], *opened[row["event_id"]], texts=texts))
        else:
            items.append(_recall_item(recalls[row["event_id"]], shown, readable_spaces))
    access.hide_unseen_links_in([[item["before"], item["after"], item["changes"]]
                                 for item in items if item["kind"] == "audit"], actor)
    return items


def _opened(event: AuditEvent, *, concealed: bool) -> tuple[dict[str, Any], bool]:
    """The event's payload ({} when concealed) and whether its key was destroyed."""
    try:
        return ({} if concealed else event.payload_data or {}), False
    except KeyDestroyed:
        # The space was forgotten or its key destroyed: that it happened stays, not what.
        return {}, True


@dataclass
class MemoryTexts:
    """What memories that still exist say, for putting text back into digested payloads.

    `versions`: (memory id, version) -> the MemoryVersion, for the events that made it.
    `archive_reasons`: memory id -> its current archive reason.
    """

    versions: dict[tuple[str, int], Any]
    archive_reasons: dict[str, str]


def _made_version(payload: dict[str, Any]) -> int | None:
    """The version a digested memory event made: N for an edit, restore or merge that went
    from N-1 to N, 1 for a create; None for events that made none (archive, delete)."""
    before, after = payload.get("before"), payload.get("after")
    if not isinstance(after, dict) or not isinstance(after.get("version"), int):
        return None
    if "changes" in payload:
        made_one = isinstance(before, dict) and before.get("version") == after["version"] - 1
        return after["version"] if made_one else None
    return after["version"] if after["version"] == 1 else None  # a create


def _memory_texts(audits: dict[int, AuditEvent],
                  opened: dict[int, tuple[dict[str, Any], bool]]) -> MemoryTexts:
    """Load, in at most two queries, the text digested memory events of a page stand for.

    Memory events record fingerprints, not text (governance.audit.digests). While the
    memory exists, its versions (deleted with it) still hold the text and the diffs.
    """
    wanted: set[tuple[str, int]] = set()
    archived: set[str] = set()
    for pk, event in audits.items():
        payload = opened[pk][0]
        if event.target_type != "memory" or not payload.get("digests"):
            continue
        version = _made_version(payload)
        if version is not None:
            wanted.add((event.target_id, version))
        elif event.action in (AuditAction.ARCHIVE, AuditAction.UNARCHIVE):
            archived.add(event.target_id)
    versions: dict[tuple[str, int], Any] = {}
    if wanted:
        pairs = Q()
        for memory_id, version in wanted:
            pairs |= Q(memory_id=memory_id, version=version)
        MemoryVersion: type[Any] = access.memory_registry().versions
        versions = {(v.memory_id, v.version): v
                    for v in MemoryVersion.objects.filter(pairs).only("memory_id", "version", "snapshot",
                                                                      "changes", "reason")}
    reasons = (dict(_memory_model().objects.filter(pk__in=archived).values_list("pk", "archive_reason"))
               if archived else {})
    return MemoryTexts(versions=versions, archive_reasons=reasons)


def _with_text(event: AuditEvent, payload: dict[str, Any], texts: MemoryTexts | None) -> dict[str, Any]:
    """A digested memory payload with its text put back where the memory still has it.

    An event that made a version shows that version's diff and reason (a create, its
    snapshot); an archive or restore shows its reason if it is the memory's current archive
    reason. Whatever cannot be put back stays a fingerprint {digest, length}; reasons and
    notes that cannot are left out.
    """
    payload = dict(payload)
    version = _made_version(payload)
    found = texts.versions.get((event.target_id, version)) if texts and version is not None else None
    if found is not None and "changes" in payload:
        payload["changes"], payload["note"] = found.changes, found.reason
    elif found is not None:
        payload["after"] = {"version": version, **found.snapshot}
    current = texts.archive_reasons.get(event.target_id) if texts else None
    key_id = cipher.key_id_of(event.payload)

    def said(value: Any) -> str | None:
        if isinstance(value, str):
            return value
        if current and digests.matches(value, key_id, current):
            return current
        return None

    if "changes" in payload:
        changes = []
        for change in payload["changes"] or []:
            shown = {name: value for name, value in change.items() if name != "reason"}
            reason = said(change.get("reason"))
            if reason is not None:
                shown["reason"] = reason
            changes.append(shown)
        payload["changes"] = changes
    payload["note"] = said(payload.get("note")) or ""
    return payload


def _audit_item(event: AuditEvent, payload: dict[str, Any], shredded: bool, *,
                texts: MemoryTexts | None = None) -> dict[str, Any]:
    if event.target_type == "memory" and payload.get("digests"):
        payload = _with_text(event, payload, texts)
    before, after = payload.get("before"), payload.get("after")
    changes = payload.get("changes")
    if changes is None:
        changes = shallow_diff(before, after)
    return {
        "kind": "audit",
        "event_id": event.pk,
        "at": event.at,
        "action": event.action,
        "actor": event.actor_label,
        "actor_id": event.actor_id,
        "request_id": event.request_id or None,
        "space": event.space_slug or None,
        "target": {"type": event.target_type, "id": event.target_id} if event.target_type else None,
        "changes": changes,
        "before": before,
        "after": after,
        "note": payload.get("note", ""),
        "payload_shredded": shredded,
        "recall": None,
    }


def _recall_item(event, shown: set[str], readable_spaces: set[str]) -> dict[str, Any]:
    by_id = {item.get("id"): item for item in event.items}
    items = []
    for rank, memory_id in enumerate(event.memory_ids, start=1):
        if memory_id not in shown:
            continue
        item = by_id.get(memory_id, {})
        items.append({
            "memory_id": memory_id,
            "rank": rank,
            "score": item.get("score"),
            "signals": item.get("signals", {}),
            "rationale": item.get("rationale", ""),
        })
    return {
        "kind": "recall",
        "event_id": event.pk,
        "at": event.created_at,
        "action": RECALL,
        "actor": event.actor.get_username() if event.actor is not None else None,
        "actor_id": event.actor_id,
        "request_id": None,
        "space": None,
        "target": None,
        "changes": None,
        "before": None,
        "after": None,
        "note": "",
        "payload_shredded": False,
        "recall": {
            "query": event.query_text,
            "active_task": event.active_task,
            "profile": event.profile,
            "spaces": [slug for slug in event.spaces if slug in readable_spaces],
            "fail_safe": event.fail_safe,
            "items": items,
        },
    }


def shallow_diff(before: Any, after: Any) -> list[dict[str, Any]] | None:
    """[{path, before, after}] for the top-level keys that differ, when both are objects."""
    if not isinstance(before, dict) and not isinstance(after, dict):
        return None
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    return [
        {"path": key, "before": before.get(key), "after": after.get(key)}
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
