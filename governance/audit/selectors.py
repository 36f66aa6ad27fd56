"""Audit timelines: a memory's or a space's audit events and recall events, newest first.

Both kinds are merged in the database (UNION ALL of (kind, id, time)), so a page is one
LIMIT/OFFSET query however the two streams interleave; only the page's rows are then
loaded. Recall events come from retrieval's RecallEvent, which keeps why each memory was
recalled; the audit log's own `recall` rows are left out here, as they would repeat them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.apps import apps
from django.db.models import BooleanField, CharField, Exists, F, Func, OuterRef, QuerySet, Subquery, Value

from governance import access, roles
from governance.audit.models import AuditAction, AuditEvent
from governance.crypto.errors import KeyDestroyed

RECALL = AuditAction.RECALL.value


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


# Lazy model lookups: governance sits below memories and retrieval (STYLE.md, "Layout").
def _memory_model():
    return apps.get_model("memories", "Memory")


def _recall_model():
    return apps.get_model("retrieval", "RecallEvent")


def memory_timeline(*, actor, memory_id: str, filters: TimelineFilters) -> Timeline:
    """The audit and recall events of one memory the actor may audit (else NotFound/Forbidden)."""
    memory = access.access_object(_memory_model().objects.all(), actor, pk=memory_id,
                                  action="audit", label="memory")
    audit = AuditEvent.objects.filter(target_type="memory", target_id=memory.pk)
    recall = _recall_model().objects.filter(memory_ids__contains=[memory.pk])

    def load(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _load(rows, recalled=lambda ids: {memory.pk} & set(ids))

    return Timeline(_merge(audit, recall, filters), load)


def space_timeline(*, actor, slug: str, filters: TimelineFilters) -> Timeline:
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
    sees_all = access.rights(actor).get(space.pk)
    sees_all = sees_all is not None and sees_all.rank >= roles.RANK[roles.Role.OWNER]

    def conceal(rows: dict[int, AuditEvent]) -> set[int]:
        if sees_all:
            return set()
        memory_ids = {e.target_id for e in rows.values() if e.target_type == "memory"}
        existing = set(in_space.filter(pk__in=memory_ids).values_list("pk", flat=True))
        return {pk for pk, e in rows.items() if e.target_type == "memory" and e.target_id not in existing}

    def load(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _load(rows, recalled=lambda ids: set(visible.filter(pk__in=list(ids))
                                                    .values_list("pk", flat=True)), conceal=conceal)

    return Timeline(_merge(audit, recall, filters), load)


def _merge(audit: QuerySet, recall: QuerySet, filters: TimelineFilters) -> QuerySet:
    audit = audit.exclude(action=RECALL)
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


def _load(rows: list[dict[str, Any]], *, recalled: Callable[[Iterable[str]], set[str]],
          conceal: Callable[[dict[int, AuditEvent]], set[int]] = lambda _: set()) -> list[dict[str, Any]]:
    """Turn a page of (kind, event_id) rows into timeline items, in the page's order.

    `recalled(ids)` says which of a recall's memory ids belong on this timeline.
    """
    audit_ids = [row["event_id"] for row in rows if row["kind"] == "audit"]
    recall_ids = [row["event_id"] for row in rows if row["kind"] == "recall"]
    audits = AuditEvent.objects.in_bulk(audit_ids) if audit_ids else {}
    recalls = (_recall_model().objects.select_related("actor").in_bulk(recall_ids)
               if recall_ids else {})
    shown = recalled({mid for event in recalls.values() for mid in event.memory_ids}) if recalls else set()
    concealed = conceal(audits) if audits else set()
    items = []
    for row in rows:
        if row["kind"] == "audit":
            items.append(_audit_item(audits[row["event_id"]], concealed=row["event_id"] in concealed))
        else:
            items.append(_recall_item(recalls[row["event_id"]], shown))
    return items


def _audit_item(event: AuditEvent, *, concealed: bool = False) -> dict[str, Any]:
    try:
        payload, shredded = ({} if concealed else event.payload_data or {}), False
    except KeyDestroyed:
        # The space was forgotten or its key destroyed: that it happened stays, not what.
        payload, shredded = {}, True
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


def _recall_item(event, shown: set[str]) -> dict[str, Any]:
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
            "spaces": list(event.spaces),
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
