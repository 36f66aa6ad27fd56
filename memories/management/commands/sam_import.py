"""Import SAM entries from JSON lines (or a JSON array): `manage.py sam_import file.jsonl`."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from governance.access import SYSTEM
from memories.capture.transfer import memories_import


def _rows(text: str):
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CommandError(f"The file is not a valid JSON array: {exc}") from exc
        yield from enumerate(items, start=1)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, exc


class Command(BaseCommand):
    help = "Import memories; valid rows are kept, each bad row is reported with its line number."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", help="JSONL or JSON array file, or - for stdin.")
        parser.add_argument("--space", help="Space slug for rows that name none.")
        parser.add_argument("--atomic", action="store_true", help="Write nothing unless every row is valid.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args, path: str, space: str | None, atomic: bool, json: bool, **options) -> None:
        import json as json_lib

        try:
            text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from exc
        report = memories_import(actor=SYSTEM, rows=_rows(text), default_space=space, atomic=atomic)
        if json:
            self.stdout.write(json_lib.dumps(report.as_dict(), indent=2))
        else:
            summary = report.as_dict()
            self.stdout.write(
                f"rows: {summary['total']}  created: {summary['created']}  failed: {summary['failed']}"
                f"  reinforced: {summary['reinforced']}  remapped ids: {len(summary['remapped'])}"
            )
            for item in summary["duplicates"]:
                self.stdout.write(
                    f"  row {item['row']}: the same text is stored as {item['memory']}; reinforced")
            for item in summary["remapped"]:
                self.stdout.write(f"  row {item['row']}: id {item['from']} was taken, now {item['to']}")
            for item in summary["errors"]:
                for field, problems in item["errors"].items():
                    self.stdout.write(f"  row {item['row']}: {field}: {' '.join(problems)}")
        if report.errors:
            raise CommandError(
                "nothing was imported (--atomic)" if atomic else f"{len(report.errors)} rows failed"
            )
