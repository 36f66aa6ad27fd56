"""Export memories as SAM JSON lines: `manage.py sam_export [--space s] [-o file.jsonl]`."""

import json
import sys

from django.core.management.base import BaseCommand

from governance.access import SYSTEM
from memories.capture.transfer import memories_export


class Command(BaseCommand):
    help = "Write memories as JSON lines (one SAM entry per line) to a file or stdout."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--space", action="append", default=[], help="Space slug (repeatable).")
        parser.add_argument("--include-archived", action="store_true")
        parser.add_argument("-o", "--output", default="-", help="File path, or - for stdout.")

    def handle(self, *args, space: list[str], include_archived: bool, output: str, **options) -> None:
        handle = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
        count = 0
        try:
            for row in memories_export(actor=SYSTEM, spaces=space, include_archived=include_archived):
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
        finally:
            if handle is not sys.stdout:
                handle.close()
        self.stderr.write(f"exported {count} memories")
