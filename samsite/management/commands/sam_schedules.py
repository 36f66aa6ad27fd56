"""Create or update SAM's periodic jobs. Idempotent: run it as often as you like."""

from datetime import datetime, timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone
from django_q.models import Schedule

# The sweep for memories whose embedding job was lost runs twice a minute: django-q2 ticks its
# scheduler about every 30 s and a schedule repeats at most once a minute, so two one-minute
# schedules half a minute apart make it run at every tick. A lost job is then picked up within
# the sweep's grace (memories.tasks.PENDING_GRACE_SECONDS) plus about 30 s.
_PENDING_SWEEP = {
    "func": "memories.tasks.memory_embed_pending",
    "schedule_type": Schedule.MINUTES,
    "minutes": 1,
}

SCHEDULES = [
    {"name": "sam: embed memories left pending", **_PENDING_SWEEP},
    # Created 30 s after the first; the scheduler keeps each schedule's phase from then on.
    {"name": "sam: embed memories left pending (half a minute later)", **_PENDING_SWEEP,
     "first_run_offset_seconds": 30},
    {
        "name": "sam: forget Idempotency-Key answers past their lifetime",
        "func": "memories.tasks.idempotency_keys_prune",
        "schedule_type": Schedule.HOURLY,
    },
    {
        "name": "sam: refresh lexeme statistics for recall",
        "func": "retrieval.tasks.lexeme_stats_refresh",
        "schedule_type": Schedule.MINUTES,
        "minutes": 30,
    },
    {
        "name": "sam: finish PRD formation, compaction and chain summaries left behind",
        "func": "prd.tasks.prd_sweep",
        "schedule_type": Schedule.MINUTES,
        "minutes": 5,
    },
    {
        # An import whose job died is failed once it has run past its job's timeout plus a
        # margin (memories.capture.runs.stuck_after), so within ten minutes of that.
        "name": "sam: fail chat imports whose job stopped",
        "func": "memories.tasks.chat_imports_reap",
        "schedule_type": Schedule.MINUTES,
        "minutes": 10,
    },
    {
        "name": "sam: apply space retention windows",
        "func": "governance.tasks.retention_sweep",
        "schedule_type": Schedule.HOURLY,
    },
    # The lifecycle (docs/lifecycle.md, "Jobs"), at night in UTC.
    {"name": "sam: nightly maintenance (decay, archive suggestions, pruning)",
     "func": "samsite.maintenance.nightly", "schedule_type": Schedule.DAILY, "first_run_at_hour": 3},
    {"name": "sam: weekly maintenance (stale cards, PRD work left behind)",
     "func": "samsite.maintenance.weekly", "schedule_type": Schedule.WEEKLY, "first_run_at_hour": 4},
    {"name": "sam: monthly maintenance (planner statistics, lifecycle statistics)",
     "func": "samsite.maintenance.monthly", "schedule_type": Schedule.MONTHLY, "first_run_at_hour": 5},
]


def _first_run(offset_seconds: float, at_hour: int | None) -> datetime:
    now = timezone.now()
    if at_hour is None:
        return now + timedelta(seconds=offset_seconds)
    # The next time it is `at_hour`:00 UTC.
    start = now.replace(hour=at_hour, minute=0, second=0, microsecond=0)
    return start if start > now else start + timedelta(days=1)


class Command(BaseCommand):
    help = "Create or update SAM's django-q2 schedules."

    def handle(self, *args, **options) -> None:
        for spec in SCHEDULES:
            spec = dict(spec)
            name = spec.pop("name")
            offset = spec.pop("first_run_offset_seconds", 0)
            at_hour = spec.pop("first_run_at_hour", None)
            # next_run is set on creation only: updating must not move a schedule's phase.
            _, created = Schedule.objects.update_or_create(
                name=name, defaults={**spec, "repeats": -1},
                create_defaults={**spec, "repeats": -1,
                                 "next_run": _first_run(offset, at_hour)},
            )
            self.stdout.write(f"{'created' if created else 'updated'}: {name}")
