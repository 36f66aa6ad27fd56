"""A memory's history as the admin shows it: its audit timeline and its versions, in words.

The timeline selector (governance.audit.selectors.memory_timeline) answers the API's JSON
shapes and versions hold JSON diffs; a person reads "Recalled for “release day” · rank 1"
and "title: Release day", not a payload. Pure: items in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.admin_text import is_empty, label, readable
from governance.audit.models import AuditAction

ACTIONS = dict(AuditAction.choices)
# What a create shows of the memory it made, in this order (the version lists every field).
CREATE_SHOWN = ("title", "kind", "memory_type", "tags", "reliability", "priority", "source",
                "confidence_score", "content")
# Bookkeeping a change list leaves out.
CHANGE_HIDDEN = frozenset({"version", "content_hash"})
# Long text is cut on the timeline; the memory's page shows it whole.
CHANGE_LIMIT = 160


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str


@dataclass
class TimelineRow:
    at: Any
    action: str  # the stored action, for the row's CSS class
    what: str
    who: str
    note: str
    changes: list[Change] = field(default_factory=list)
    # A create lists what it set as "field: value" (there is no before).
    set_fields: list[tuple[str, str]] = field(default_factory=list)
    shredded: bool = False


# Who wrote a version that names no user: SAM itself (a job, an import, the demo data) or a
# user since deleted (the link is cleared with the user).
NO_USER = "system"


@dataclass
class VersionRow:
    version: int
    at: Any
    who: str
    why: str
    changes: list[Change]
    # Version 1 lists what the memory was created with (there is no before).
    set_fields: list[tuple[str, str]]


def version_rows(versions: Iterable[Any]) -> list[VersionRow]:
    """MemoryVersion rows (with `actor` loaded), in the order given."""
    rows = []
    for v in versions:
        first = v.version == 1
        rows.append(VersionRow(version=v.version, at=v.created_at,
                               who=v.actor.get_username() if v.actor else NO_USER, why=v.reason or "",
                               changes=[] if first else _changes(v.changes or []),
                               set_fields=_set_fields(v.snapshot or {}) if first else []))
    return rows


def timeline_rows(items: list[dict[str, Any]]) -> list[TimelineRow]:
    return [_recall_row(item) if item["kind"] == "recall" else _audit_row(item) for item in items]


def _recall_row(item: dict[str, Any]) -> TimelineRow:
    recall = item.get("recall") or {}
    parts = []
    if recall.get("query"):
        parts.append(f"Asked “{readable(recall['query'], limit=120)}”")
    if recall.get("active_task"):
        parts.append(f"while working on “{readable(recall['active_task'], limit=80)}”")
    for found in recall.get("items", []):
        why = f". {readable(found['rationale'], limit=160)}" if found.get("rationale") else ""
        parts.append(f"returned at rank {found['rank']}{why}")
    return TimelineRow(at=item["at"], action=item["action"], what="Recalled",
                       who=item.get("actor") or NO_USER, note=", ".join(parts))


def _audit_row(item: dict[str, Any]) -> TimelineRow:
    action = item["action"]
    row = TimelineRow(at=item["at"], action=action, what=ACTIONS.get(action, label(action)),
                      who=item.get("actor") or NO_USER, note=item.get("note") or "",
                      shredded=bool(item.get("payload_shredded")))
    if action == AuditAction.CREATE and not item.get("before"):
        row.set_fields = _set_fields(item.get("after") or {})
        return row
    row.changes = _changes(item.get("changes") or [])
    return row


def _changes(changes: list[dict[str, Any]]) -> list[Change]:
    return [Change(field=label(path), before=_value(path, change.get("before")),
                   after=_value(path, change.get("after")))
            for change in changes if (path := str(change.get("path", ""))) not in CHANGE_HIDDEN]


def _set_fields(after: dict[str, Any]) -> list[tuple[str, str]]:
    return [(label(name), _value(name, after[name])) for name in CREATE_SHOWN
            if name in after and not is_empty(after[name])]


def _value(name: str, value: Any) -> str:
    if name == "source" and isinstance(value, dict):
        # {"type": "user", "ref": "api", "uri": None} reads "user, api".
        value = [part for part in (value.get("type"), value.get("ref"), value.get("uri")) if part]
    return readable(value, limit=CHANGE_LIMIT)
