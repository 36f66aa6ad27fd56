"""JSONL import and export of SAM entries (README.md, "Management commands": sam_import, sam_export)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from core.actor import Actor
from core.api.exceptions import flatten_errors
from core.models import Space
from governance.audit.services import audit_record
from governance.modes import WriteOutcome
from memories import selectors, services
from memories.api.serializers import MemoryCreateInputSerializer, MemoryOutputSerializer
from memories.models import Memory

# Fields of an exported entry that describe stored state rather than input.
_STATE_FIELDS = (
    "archive_flag", "archived_at", "archive_reason", "created_at", "updated_at", "usage_count",
    "access_count", "last_used_at", "last_accessed_at", "version", "content_hash", "embeddings",
    "embedding_status",
)
IMPORT_CHUNK = 500
# The file name a download of everything about the caller is offered under.
ABOUT_ME_FILE_NAME = "sam-about-me.jsonl"


def memories_export(*, actor: Actor, spaces: list[str], include_archived: bool, about_me: bool = False,
                    within: QuerySet[Memory] | None = None) -> Iterator[dict[str, Any]]:
    """Every visible memory of `spaces` (all when empty) as SAM JSON, oldest id first.

    Audited whatever happens to the stream: when it ends, when the reader stops early or
    fails (the generator is closed), and when nothing matched. Each named space the actor
    may read gets a row, even with 0 memories; `complete` says whether the stream was
    read to its end.
    """
    filters = selectors.MemoryFilters(spaces=spaces, archived=None if include_archived else False,
                                      about_me=about_me)
    queryset = selectors.memory_list(actor=actor, filters=filters).order_by("id")
    if within is not None:
        # A curator's selection in the admin: still only what the actor may read.
        queryset = queryset.filter(pk__in=within.values("pk"))
    counts: Counter[int] = Counter()
    complete = False
    try:
        for memory in queryset.iterator(chunk_size=500):
            counts[memory.space_id] += 1
            yield MemoryOutputSerializer(memory).data
        complete = True
    finally:
        # A finally, not code after the loop: a reader that stops early closes the
        # generator, and that export happened too (as far as it went).
        named = selectors.space_list(actor=actor).filter(slug__in=spaces) if spaces else Space.objects.none()
        for space_id in named.values_list("pk", flat=True):
            counts.setdefault(space_id, 0)
        _audit_per_space("export", actor, counts, include_archived=include_archived,
                         complete=complete, requested=sorted(spaces),
                         **({"about_me": True} if about_me else {}),
                         **({"selection": True} if within is not None else {}))


def about_me_lines(*, actor: Actor, include_archived: bool = True) -> Iterator[str]:
    """Everything SAM knows about `actor` as SAM JSONL lines (one entry a line, newline ended),
    audited as an export: what GET /api/v1/me/export/ and the My memory page's download send."""
    rows = memories_export(actor=actor, spaces=[], about_me=True, include_archived=include_archived)
    return (json.dumps(row, default=str) + "\n" for row in rows)


def _audit_per_space(action: str, actor: Actor, counts: Counter[int], *, requested: list[str] | None = None,
                     **details: Any) -> None:
    """One audit event per space touched: how many memories, never which texts.

    With no space touched, one event without a space, so the attempt is on record too.
    `requested` (the slugs asked for) goes only into that space-less event: a space's
    own event must not name other spaces, which its auditors may not see.
    """
    touched = list(Space.objects.filter(pk__in=list(counts)).order_by("pk"))
    for space in touched:
        audit_record(action, actor=actor, space=space, target=space,
                     after={"memories": counts[space.pk], **details})
    if not touched:
        audit_record(action, actor=actor, target_type="space", target_id="",
                     after={"memories": 0, "spaces": requested or [], **details})


@dataclass
class ImportReport:
    """What an import did, row by row. Rows are numbered from 1 as lines in the file."""

    total: int = 0
    created: int = 0
    # Valid rows a space's or the user's incognito mode answered for but did not keep.
    discarded: int = 0
    archived: int = 0
    # Rows whose text the space held already: that memory was reinforced, no row added.
    reinforced: int = 0
    duplicates: dict[int, str] = field(default_factory=dict)
    remapped: dict[int, tuple[str, str]] = field(default_factory=dict)
    errors: dict[int, dict[str, list[str]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total, "created": self.created, "failed": len(self.errors),
            "discarded": self.discarded, "archived": self.archived, "reinforced": self.reinforced,
            "duplicates": [{"row": r, "memory": m} for r, m in sorted(self.duplicates.items())],
            "remapped": [{"row": r, "from": a, "to": b} for r, (a, b) in sorted(self.remapped.items())],
            "errors": [{"row": r, "errors": e} for r, e in sorted(self.errors.items())],
        }


def memories_import(*, actor: Actor, rows: Iterable[tuple[int, Any]], default_space: str | None = None,
                    atomic: bool = False) -> ImportReport:
    """Create memories from SAM entries; keep the valid rows and report the rest.

    `rows` yields (row_number, parsed JSON or an Exception for an unparsable line). Ids
    already in use are replaced by new ones and reported as remapped.
    """
    report = ImportReport()
    pending: list[tuple[int, dict[str, Any], bool]] = []
    for number, raw in rows:
        report.total += 1
        if isinstance(raw, Exception):
            report.errors[number] = {"non_field_errors": [f"Not valid JSON: {raw}"]}
            continue
        if not isinstance(raw, dict):
            report.errors[number] = {"non_field_errors": ["Each row must be a JSON object."]}
            continue
        data = {k: v for k, v in raw.items() if k not in _STATE_FIELDS}
        if default_space and not data.get("space"):
            data["space"] = default_space
        shape = MemoryCreateInputSerializer(data=data)
        if not shape.is_valid():
            report.errors[number] = flatten_errors(shape.errors)
            continue
        pending.append((number, dict(shape.validated_data), bool(raw.get("archive_flag"))))

    taken = set(Memory.objects.filter(pk__in=[d.get("id") for _, d, _ in pending if d.get("id")])
                .values_list("pk", flat=True))
    for number, data, _ in pending:
        if data.get("id") in taken:
            old = data.pop("id")
            report.remapped[number] = (old, "")

    if atomic and report.errors:
        return report
    imported: Counter[int] = Counter()
    # All-or-nothing needs one transaction, so an atomic import is one chunk.
    size = max(1, len(pending)) if atomic else IMPORT_CHUNK
    for start in range(0, len(pending), size):
        chunk = pending[start:start + size]
        result = services.memory_bulk_create(actor=actor, items=[d for _, d, _ in chunk], atomic=atomic)
        # An atomic chunk with a failed row creates (and discards) nothing at all.
        chunk_failed = atomic and bool(result.failed)
        for (number, _, archive), row in zip(chunk, result.rows, strict=True):
            if row.errors:
                report.errors[number] = row.errors
            # Rows an incognito mode answered for carry an unsaved memory: not kept.
            kept = not chunk_failed and not row.errors and row.outcome is WriteOutcome.STORE
            memory = row.memory if kept else None
            if memory is not None and row.reinforced:
                # The space holds this text already: that memory was reinforced instead.
                report.reinforced += 1
                report.remapped.pop(number, None)
                report.duplicates[number] = memory.id
                continue
            if memory is None:
                # Failed, refused, or discarded by an incognito mode: nothing was kept.
                report.remapped.pop(number, None)
                if not chunk_failed and not row.errors and row.outcome is WriteOutcome.DISCARD:
                    report.discarded += 1
                continue
            report.created += 1
            if number in report.remapped:
                report.remapped[number] = (report.remapped[number][0], memory.id)
            imported[memory.space_id] += 1
            if archive:
                services.memory_archive(actor=actor, memory_id=memory.id, reason="imported archived")
                report.archived += 1
    _audit_per_space("import", actor, imported, rows=report.total, failed=len(report.errors))
    return report
