"""Create or update SAM's periodic jobs. Idempotent: run it as often as you like."""

from django.core.management.base import BaseCommand
from django_q.models import Schedule

SCHEDULES = [
    {
        "name": "sam: embed memories left pending",
        "func": "memories.tasks.memory_embed_pending",
        "schedule_type": Schedule.MINUTES,
        "minutes": 5,
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
        "name": "sam: apply space retention windows",
        "func": "governance.tasks.retention_sweep",
        "schedule_type": Schedule.HOURLY,
    },
]


class Command(BaseCommand):
    help = "Create or update SAM's django-q2 schedules."

    def handle(self, *args, **options) -> None:
        for spec in SCHEDULES:
            spec = dict(spec)
            name = spec.pop("name")
            _, created = Schedule.objects.update_or_create(name=name, defaults={**spec, "repeats": -1})
            self.stdout.write(f"{'created' if created else 'updated'}: {name}")
