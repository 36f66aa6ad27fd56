"""Import a chat history (Claude Code, ChatGPT, Cursor, SAM's JSONL) into a space."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.actor import Actor
from core.errors import DomainError
from governance.access import SYSTEM
from memories.capture import ingest


class Command(BaseCommand):
    help = ("Import a chat history into a space: claude_code (~/.claude/projects), chatgpt (the export's "
            "conversations*.json), cursor (state.vscdb), jsonl (SAM's generic format). See docs/capture.md.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", choices=ingest.SOURCES)
        parser.add_argument("path", help="a file or a folder")
        parser.add_argument("--space", required=True,
                            help="the space's slug (its owner must allow the source)")
        parser.add_argument("--user", help="act as this user (default: SAM itself)")
        parser.add_argument("--dry-run", action="store_true", help="read and extract; write nothing")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the report as JSON")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def handle(self, *args, source: str, path: str, space: str, user: str | None, dry_run: bool,
               as_json: bool, no_progress: bool, **options) -> None:
        actor: Actor = SYSTEM
        if user:
            found = get_user_model().objects.filter(username=user).first()
            if found is None:
                raise CommandError(f"No user '{user}'.")
            actor = found
        shown = not no_progress and sys.stderr.isatty()
        # The total (for the ETA) costs a quick first pass; only worth it when a bar is shown.
        total = ingest.count(source, Path(path)) if shown else None
        bar = tqdm(total=total, unit=" conversations", file=sys.stderr, disable=not shown, dynamic_ncols=True)
        started = time.monotonic()

        def progress(report: ingest.ChatImportReport) -> None:
            bar.set_postfix(exchanges=report.exchanges, created=report.memories_created,
                            unchanged=report.conversations_skipped, errors=len(report.errors), refresh=False)
            bar.update(1)

        try:
            report = ingest.chat_import(actor=actor, space_slug=space, source=source, path=Path(path),
                                        dry_run=dry_run, progress=progress)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        finally:
            bar.close()
        seconds = time.monotonic() - started
        if as_json:
            self.stdout.write(json.dumps(report.as_dict() | {"seconds": round(seconds, 2)}, indent=2))
            return
        self.stdout.write(
            f"{report.conversations_seen} conversations ({report.conversations_skipped} unchanged), "
            f"{report.exchanges} exchanges, {report.memories_created} memories created, "
            f"{report.memories_reinforced} reinforced, {len(report.rejected)} rejected, "
            f"{len(report.errors)} unreadable items, in {seconds:.1f} s{' (dry run)' if dry_run else ''}")
        for error in report.errors[:50]:
            self.stdout.write(f"  {error['origin']} {error['item']}: {error['reason']}")
