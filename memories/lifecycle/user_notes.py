"""A chat user's notes: idle high notes lowered, and a cap on how many a user keeps
(seed 003's lifecycle; docs/lifecycle.md, "A chat user's notes").

Both rules apply to user spaces (`Space.kind == "user"`), whose mode lets SAM write:

- **Lowering.** A `high` note with no sign of life for `high_idle_days` (30) before its
  space's last activity becomes `normal`: a new version whose changelog says why, and an
  `edit` audit row. Idle is counted back from the space's own last activity, not from
  today, so the notes of a user who has not come back for months are left as they were.
- **The cap.** A user space keeps at most `note_cap` (200) active memories. Past it, the
  oldest by sign of life are archived (not deleted; an `archive` audit row each): `low`
  ones first, then `normal` ones. `core`, `high` and `confirmed` memories are never
  trimmed; when they alone fill the space it stays over its cap (reported). Trimmed when
  new notes settle (memories.settle) and by the nightly job.

A memory's *sign of life* is the latest of its last use (put in a prompt, or marked used),
its last recall and its last edit (its creation when never edited). A space's *last
activity* is the latest sign of life of its active memories.

Lowering is the system's edit, not a sign of life: it keeps the note's `updated_at`, so a
lowered note is not made to look fresh (it would otherwise be the last normal note trimmed,
and would wake its space up). Both jobs work in batches of BATCH notes, each its own short
transaction: the writes first, then the audit rows, because every audit append holds the
audit chain's lock until the transaction ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.models import Space, SpaceKind
from core.signals import announce_change
from governance import policy
from governance.access import SYSTEM
from governance.audit.services import audit_record
from governance.modes import WriteOutcome
from memories import entry, services
from memories.models import Memory, MemoryVersion, Priority, Reliability

logger = logging.getLogger(__name__)

# Notes per transaction. Small: a batch's audit rows hold the audit chain's lock until it commits.
BATCH = 100
LOWER_REASON = "unused for {days} days before the space's last activity: high → normal"
TRIM_REASON = "over the space's note cap ({cap}): oldest low and normal notes archived first"
# Never trimmed: pinned (core), high, and what a person confirmed.
TRIMMABLE_PRIORITIES = (Priority.LOW, Priority.NORMAL)

SIGN_OF_LIFE_SQL = "GREATEST(s.last_used_at, s.last_accessed_at, m.updated_at)"
# Lock class of a user space's trim (the key is the space id): a settle and the nightly job
# trimming one space at once would each count the space before the other archived, and
# archive twice as many as it held over its cap.
TRIM_LOCK = int.from_bytes(b"trim", "big")  # fits the int4 of the two-key form


def note_cap(space: Space) -> int:
    """The space's cap (its own, else SAM_USER_NOTE_CAP); 0 when it has none."""
    cap = space.note_cap if space.note_cap is not None else settings.SAM_USER_NOTE_CAP
    return max(0, int(cap)) if space.kind == SpaceKind.USER else 0


def high_idle_days(space: Space) -> int:
    """Days before a high note is lowered (its own, else SAM_USER_HIGH_IDLE_DAYS); 0 never."""
    days = space.high_idle_days if space.high_idle_days is not None else settings.SAM_USER_HIGH_IDLE_DAYS
    return max(0, int(days)) if space.kind == SpaceKind.USER else 0


def _writable(space: Space) -> bool:
    return policy.policy(SYSTEM, space).write is WriteOutcome.STORE


def _user_spaces(space_ids: Iterable[int] | None) -> list[Space]:
    spaces = Space.objects.filter(kind=SpaceKind.USER)
    if space_ids is not None:
        spaces = spaces.filter(pk__in=list(space_ids))
    return list(spaces.order_by("pk"))


def last_activity(space_ids: list[int]) -> dict[int, datetime]:
    """The latest sign of life of each space's active memories (spaces without any are left out)."""
    if not space_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.space_id, max({SIGN_OF_LIFE_SQL}) FROM memories_memory m "
            "JOIN memories_memorystats s ON s.memory_id = m.id "
            "WHERE m.space_id = ANY(%s) AND m.archived = false GROUP BY m.space_id",
            [space_ids],
        )
        return {space_id: latest for space_id, latest in cursor.fetchall() if latest is not None}


# --- lowering idle high notes ---------------------------------------------------------

@dataclass
class LowerReport:
    dry_run: bool
    lowered: list[str] = field(default_factory=list)
    batches: int = 0
    # Spaces left alone because their mode refuses writes now.
    skipped_spaces: dict[str, str] = field(default_factory=dict)


IDLE_HIGH_SQL = f"""
SELECT m.id FROM memories_memory m
JOIN memories_memorystats s ON s.memory_id = m.id
JOIN unnest(%(spaces)s::bigint[], %(cutoffs)s::timestamptz[]) AS c(space_id, cutoff)
  ON c.space_id = m.space_id
WHERE m.archived = false AND m.priority = 'high' AND {SIGN_OF_LIFE_SQL} < c.cutoff AND m.id > %(after)s
ORDER BY m.id
LIMIT %(batch)s
"""


def lower_idle_high(*, space_ids: Iterable[int] | None = None, dry_run: bool = False,
                    batch: int = BATCH) -> LowerReport:
    """Lower the idle high notes of user spaces to normal (module docstring), `batch` per
    transaction. Running it twice lowers nothing more: a lowered note is no longer high."""
    report = LowerReport(dry_run=dry_run)
    days: dict[int, int] = {}
    for space in _user_spaces(space_ids):
        if not high_idle_days(space):
            continue
        if not _writable(space):
            report.skipped_spaces[space.slug] = f"mode is {space.mode}"
            continue
        days[space.pk] = high_idle_days(space)
    cutoffs = {space_id: latest - timedelta(days=days[space_id])
               for space_id, latest in last_activity(list(days)).items()}
    if not cutoffs:
        return report
    params: dict[str, Any] = {"spaces": list(cutoffs), "cutoffs": list(cutoffs.values()), "batch": batch,
                              "after": ""}
    while True:
        with connection.cursor() as cursor:
            cursor.execute(IDLE_HIGH_SQL, params)
            ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            break
        params["after"] = ids[-1]
        report.batches += 1
        report.lowered += ids if dry_run else _lower(ids, cutoffs, days)
    if report.lowered and not dry_run:
        logger.info("lowered %d idle high notes in %d batches", len(report.lowered), report.batches)
    return report


@transaction.atomic
def _lower(ids: list[str], cutoffs: dict[int, datetime], days: dict[int, int]) -> list[str]:
    """Lower these notes, each a new version; a note used since it was picked is left high."""
    locked = (Memory.objects.select_for_update(of=("self",)).select_related("space", "stats")
              .filter(pk__in=ids, archived=False, priority=Priority.HIGH).order_by("pk"))
    changed: list[tuple[Memory, list[dict], str]] = []
    for memory in locked:
        stats = memory.stats
        life = max(t for t in (stats.last_used_at, stats.last_accessed_at, memory.updated_at) if t)
        if life >= cutoffs[memory.space_id]:
            continue
        before = services.memory_state(memory)
        reason = LOWER_REASON.format(days=days[memory.space_id])
        changelog = entry.diff(before, {**before, "priority": Priority.NORMAL}, reason=reason)
        changed.append((memory, changelog, reason))
    if not changed:
        return []
    # One statement for the batch. Not save(): auto_now would stamp updated_at, and a lowering
    # is not a sign of life.
    Memory.objects.filter(pk__in=[m.pk for m, _, _ in changed]).update(
        priority=Priority.NORMAL, version=F("version") + 1)
    versions = []
    for memory, changelog, reason in changed:
        memory.priority, memory.version = Priority.NORMAL, memory.version + 1
        state = services.memory_state(memory)
        versions.append(MemoryVersion(memory=memory, version=memory.version, snapshot=entry.snapshot(state),
                                      changes=changelog, reason=reason, actor=None))
    MemoryVersion.objects.bulk_create(versions)
    announce_change({m.space_id for m, _, _ in changed})
    for memory, changelog, reason in changed:  # last: each append holds the chain lock until commit
        audit_record("edit", actor=SYSTEM, space=memory.space, target=memory, changes=changelog,
                     before={"version": memory.version - 1}, after={"version": memory.version},
                     note=reason, digest_text=True)
    return [m.pk for m, _, _ in changed]


# --- the cap --------------------------------------------------------------------------

@dataclass
class TrimReport:
    dry_run: bool
    archived: list[str] = field(default_factory=list)
    # Spaces still over their cap because only notes that are never trimmed are left: {slug: how many over}.
    over_cap: dict[str, int] = field(default_factory=dict)
    skipped_spaces: dict[str, str] = field(default_factory=dict)


TRIM_ORDER_SQL = f"""
SELECT m.id FROM memories_memory m
JOIN memories_memorystats s ON s.memory_id = m.id
WHERE m.space_id = %(space)s AND m.archived = false
  AND m.priority IN ('low', 'normal') AND m.reliability <> 'confirmed'
ORDER BY CASE m.priority WHEN 'low' THEN 0 ELSE 1 END, {SIGN_OF_LIFE_SQL}, m.id
LIMIT %(limit)s
"""


def trim_order(space: Space, limit: int) -> list[str]:
    """The first `limit` memories the cap would archive, in order: low before normal, each
    by oldest sign of life (ties by id). Core, high and confirmed ones never appear."""
    with connection.cursor() as cursor:
        cursor.execute(TRIM_ORDER_SQL, {"space": space.pk, "limit": limit})
        return [row[0] for row in cursor.fetchall()]


def trim(*, space_ids: Iterable[int] | None = None, dry_run: bool = False, batch: int = BATCH) -> TrimReport:
    """Archive what each user space holds over its cap (module docstring)."""
    report = TrimReport(dry_run=dry_run)
    for space in _user_spaces(space_ids):
        cap = note_cap(space)
        if not cap:
            continue
        if not _writable(space):
            report.skipped_spaces[space.slug] = f"mode is {space.mode}"
            continue
        _trim_space(space, cap, report, batch=batch)
    return report


def after_settled(memory_ids: list[str]) -> None:
    """The settle step: trim the user spaces these new or edited notes landed in."""
    space_ids = set(Memory.objects.filter(pk__in=memory_ids).values_list("space_id", flat=True))
    trim(space_ids=space_ids)


def _trim_space(space: Space, cap: int, report: TrimReport, *, batch: int) -> None:
    while True:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [TRIM_LOCK, space.pk])
            over = Memory.objects.filter(space=space, archived=False).count() - cap
            if over <= 0:
                return
            if report.dry_run:
                victims = trim_order(space, over)
                report.archived += victims
                _note_over_cap(report, space, over - len(victims))
                return
            victims = trim_order(space, min(over, batch))
            if not victims:
                _note_over_cap(report, space, over)
                return
            archived = _archive(space, victims, reason=TRIM_REASON.format(cap=cap))
            if not archived:  # each changed under us (raised, confirmed); the next run sees them anew
                return
            report.archived += archived


def _note_over_cap(report: TrimReport, space: Space, left: int) -> None:
    if left > 0:
        report.over_cap[space.slug] = left
        logger.info("space %s stays %d over its note cap: only core, high and confirmed notes are left",
                    space.slug, left)


def _archive(space: Space, ids: list[str], *, reason: str) -> list[str]:
    """Archive these notes (inside the caller's transaction, under the space's trim lock)."""
    now = timezone.now()
    locked = list(Memory.objects.select_for_update(of=("self",))
                  .filter(pk__in=ids, archived=False, priority__in=TRIMMABLE_PRIORITIES)
                  .exclude(reliability=Reliability.CONFIRMED).order_by("pk"))
    for memory in locked:
        memory.archived, memory.archived_at, memory.archive_reason = True, now, reason
        # One row at a time: the reason is sealed under the space's key, which an UPDATE
        # of many rows cannot do.
        memory.save(update_fields=["archived", "archived_at", "archive_reason", "updated_at"])
    announce_change([space.pk])
    for memory in locked:  # last: each append holds the chain lock until commit
        audit_record("archive", actor=SYSTEM, space=space, target=memory,
                     changes=[{"path": "archive_flag", "before": False, "after": True, "reason": reason}],
                     after={"version": memory.version}, note=reason, digest_text=True)
    return [m.pk for m in locked]
