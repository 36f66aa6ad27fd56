"""A memory's history as the admin shows it: its audit timeline and its versions, in words.

The timeline selector (governance.audit.selectors.memory_timeline) answers the API's JSON
shapes and versions hold JSON diffs; a person reads "Recalled for “release day” · rank 1"
and "title: Release day", not a payload. Pure: items in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.admin_text import NOTHING, is_empty, label, readable
from governance.audit.models import AuditAction

ACTIONS = dict(AuditAction.choices)
# What a create shows first, then the other fields it set (version and bookkeeping left out).
CREATE_FIRST = ("title", "kind", "memory_type", "tags", "reliability", "priority", "source")
CREATE_HIDDEN = frozenset({"version", "content_hash", "metadata"})
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
        parts.append(f"Recalled for “{readable(recall['query'], limit=120)}”")
    if recall.get("active_task"):
        parts.append(f"while working on “{readable(recall['active_task'], limit=80)}”")
    for found in recall.get("items", []):
        why = f": {readable(found['rationale'], limit=160)}" if found.get("rationale") else ""
        parts.append(f"rank {found['rank']}{why}")
    return TimelineRow(at=item["at"], action=item["action"], what="Recalled",
                       who=item.get("actor") or "an agent", note=" · ".join(parts) or "Recalled")


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
    return [Change(field=label(str(change.get("path", ""))),
                   before=readable(change.get("before"), limit=CHANGE_LIMIT),
                   after=readable(change.get("after"), limit=CHANGE_LIMIT))
            for change in changes if str(change.get("path", "")) not in CREATE_HIDDEN]


def _set_fields(after: dict[str, Any]) -> list[tuple[str, str]]:
    names = [*(n for n in CREATE_FIRST if n in after), *(n for n in after if n not in CREATE_FIRST)]
    return [(label(name), readable(after[name], limit=CHANGE_LIMIT)) for name in names
            if name not in CREATE_HIDDEN and not is_empty(after[name]) and readable(after[name]) != NOTHING]
