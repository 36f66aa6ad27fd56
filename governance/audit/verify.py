"""Walk the audit chain and report the first broken link.

The walk reads events in id order, a chunk at a time (keyset pagination, so memory stays
bounded and it works behind a transaction-pooling proxy, where server-side cursors fail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.db import connection
from django.db.models import BinaryField, Field
from django.db.models.functions import Cast

from governance.audit.chain import GENESIS_HASH, HASHED_FIELDS, event_digest
from governance.audit.models import AuditEvent

CHUNK_SIZE = 2000


@dataclass(frozen=True)
class ChainBreak:
    """The first place the chain does not hold.

    kind: "changed" (a row's values no longer give its hash), "missing" (a row links to
    a hash no stored row has: rows were deleted), "reordered" (a row links to a stored
    row other than the one before it in id order), "head_missing" (the expected head is
    not in the chain: the newest rows were deleted or rewritten).
    """

    kind: str
    event_id: int | None
    expected: str
    found: str
    message: str


@dataclass(frozen=True)
class ChainReport:
    events: int
    head: str
    head_event_id: int | None
    broken: ChainBreak | None = None

    @property
    def intact(self) -> bool:
        return self.broken is None


def audit_chain_verify(*, expect_head: str | None = None, chunk_size: int = CHUNK_SIZE) -> ChainReport:
    """Check every event's hash and link; with `expect_head`, also that it is still in the chain.

    A chain alone cannot tell that its newest events were deleted (what remains is a valid,
    shorter chain), so a head hash published earlier is checked against it.
    """
    expected_prev = GENESIS_HASH
    previous_id: int | None = None
    count = 0
    head_seen = expect_head is None or expect_head == GENESIS_HASH
    columns = ("id", "prev_hash", "hash", *stored_columns())
    last_id = 0
    while True:
        rows = list(
            AuditEvent.objects.filter(id__gt=last_id).order_by("id").values_list(*columns)[:chunk_size]
        )
        if not rows:
            break
        for row in rows:
            event_id, prev_hash, stored_hash = row[0], row[1], row[2]
            if prev_hash != expected_prev:
                return _report(count, expected_prev, previous_id,
                               _link_break(event_id, previous_id, expected_prev, prev_hash))
            recomputed = event_digest(prev_hash, dict(zip(HASHED_FIELDS, row[3:], strict=True)))
            if recomputed != stored_hash:
                return _report(count, expected_prev, previous_id, ChainBreak(
                    "changed", event_id, expected=recomputed, found=stored_hash,
                    message=(f"event {event_id} was changed: its stored values hash to {recomputed}, "
                             f"but it records {stored_hash}"),
                ))
            expected_prev, previous_id = stored_hash, event_id
            count += 1
            if not head_seen and stored_hash == expect_head:
                head_seen = True
        if len(rows) < chunk_size:
            break
        last_id = rows[-1][0]
    if not head_seen:
        return _report(count, expected_prev, previous_id, ChainBreak(
            "head_missing", None, expected=expect_head or "", found=expected_prev,
            message=(f"the expected head {expect_head} is not in the chain, which now ends at "
                     f"{expected_prev} after {count} events: the newest events were deleted or rewritten"),
        ))
    return _report(count, expected_prev, previous_id, None)


def stored_columns() -> list[str | Cast]:
    """The hashed columns as the walk must read them: as stored, not as decoded.

    A column kept as bytea (a sealed payload) is read as raw bytes, so the chain still
    verifies after the key that sealed it is destroyed.
    """
    columns: list[str | Cast] = []
    for name in HASHED_FIELDS:
        field = cast("Field[Any, Any]", AuditEvent._meta.get_field(name))  # hashed: concrete fields
        raw = field.db_type(connection) == "bytea" and type(field) is not BinaryField
        columns.append(Cast(name, output_field=BinaryField()) if raw else name)
    return columns


def _report(count: int, head: str, head_id: int | None, broken: ChainBreak | None) -> ChainReport:
    return ChainReport(events=count, head=head, head_event_id=head_id, broken=broken)


def _link_break(event_id: int, previous_id: int | None, expected: str, found: str) -> ChainBreak:
    """Name why `event_id` does not link to the event before it."""
    after = f"event {previous_id}" if previous_id is not None else "the start of the chain"
    linked_id = AuditEvent.objects.filter(hash=found).values_list("id", flat=True).first()
    if linked_id is None:
        return ChainBreak("missing", event_id, expected=expected, found=found, message=(
            f"event {event_id} links to {found}, which no stored event has: events between "
            f"{after} and event {event_id} were deleted, or {after} was rewritten and re-hashed "
            f"(expected a link to {expected})"))
    return ChainBreak("reordered", event_id, expected=expected, found=found, message=(
        f"event {event_id} links to event {linked_id}, not to {after} before it in id order: "
        f"events were reordered or inserted (expected a link to {expected})"))
