"""Run SAM's maintenance by hand: a period's jobs, statistics, or pruning (docs/lifecycle.md).

manage.py sam_maintenance run nightly|weekly|monthly [--dry-run]
manage.py sam_maintenance stats
manage.py sam_maintenance cleanup [--dry-run]
manage.py sam_maintenance stuck-imports [--dry-run]
"""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memories.capture import requeue as import_requeue
from memories.capture import runs as import_runs
from memories.lifecycle import maintenance as memory_maintenance
from samsite import maintenance


class Command(BaseCommand):
    help = ("Run the nightly, weekly or monthly jobs, print lifecycle statistics, prune (cleanup), "
            "or fail chat imports whose job stopped (stuck-imports).")

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="command", required=True)
        run = sub.add_parser("run", help="Run one period's jobs now.")
        run.add_argument("period", choices=maintenance.PERIODS)
        run.add_argument("--dry-run", action="store_true", help="Say what would change; change nothing.")
        sub.add_parser("stats", help="Memories by type, mean confidence, open review items.")
        cleanup = sub.add_parser("cleanup", help="Prune memories below the floor in spaces that opt in.")
        cleanup.add_argument("--dry-run", action="store_true", help="List what would go; delete nothing.")
        stuck = sub.add_parser("stuck-imports", help="Fail chat imports whose job stopped mid-run, "
                                                     "and delete their uploads; enqueue again the jobs "
                                                     "of imports queued too long (also every ten minutes).")
        stuck.add_argument("--dry-run", action="store_true", help="List them; change nothing.")

    def handle(self, *args: Any, command: str, **options: Any) -> None:
        if command == "run":
            report = maintenance.run(options["period"], dry_run=options["dry_run"])
        elif command == "stuck-imports":
            failed = import_runs.reap(dry_run=options["dry_run"])
            requeued = import_requeue.requeue_waiting(dry_run=options["dry_run"])
            report = {"dry_run": options["dry_run"], "failed": failed, "requeued": requeued,
                      "stuck_after_seconds": int(import_runs.stuck_after().total_seconds())}
        elif command == "stats":
            report = memory_maintenance.statistics()
        else:
            pruned = memory_maintenance.prune(dry_run=options["dry_run"])
            report = {
                "dry_run": pruned.dry_run,
                "pruned": pruned.pruned,
                "skipped_spaces": pruned.skipped_spaces,
            }
        self.stdout.write(json.dumps(report, indent=2, default=str))
