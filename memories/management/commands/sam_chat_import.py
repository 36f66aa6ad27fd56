"""Import a chat history (Claude Code, ChatGPT, Cursor, SAM's JSONL) into a space.

Exit codes (docs/capture.md, "Exit codes"): 0 imported (or nothing new), 1 imported but some
items could not be read, 2 usage (bad arguments, a path missing or unreadable, no such user),
3 refused (no such space, the space does not accept the source, you may not write to it, its
memory mode refuses writes).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.actor import Actor
from core.errors import DomainError, InvalidInput
from governance.access import SYSTEM
from memories.capture import ingest, personal, selectors
from memories.capture.models import new_chat_import_id
from memories.capture.watch import Watcher

OK, ITEMS_FAILED, USAGE, REFUSED = 0, 1, 2, 3


def readable(path: Path) -> str | None:
    """Why `path` cannot be read (None when it can): tried for real, as root passes os.access."""
    try:
        if path.is_dir():
            with os.scandir(path):
                pass
        else:
            with path.open("rb") as handle:
                handle.read(1)
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


class Command(BaseCommand):
    help = ("Import a chat history into a space: claude_code (~/.claude/projects), chatgpt (the export's "
            "conversations*.json), cursor (state.vscdb), jsonl (SAM's generic format). See docs/capture.md. "
            "Exit codes: 0 ok, 1 some items unreadable, 2 usage or path, 3 refused.")
    exit_code = OK

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", choices=ingest.SOURCES)
        parser.add_argument("path", help="a file or a folder")
        parser.add_argument("--space", required=True,
                            help="the space's slug (its owner must allow the source); 'me' is created on "
                                 "first use as your personal space (docs/capture.md)")
        parser.add_argument("--user", help="act as this user (default: SAM itself); with --space me, "
                                           "whose personal space (default: the only superuser)")
        parser.add_argument("--dry-run", action="store_true", help="read and extract; write nothing")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the report as JSON")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        parser.add_argument("--watch", action="store_true",
                            help="keep importing what changes (Ctrl-C stops): one line per cycle")
        parser.add_argument("--interval", type=float, default=30.0, help="seconds between --watch cycles")
        parser.add_argument("--cycles", type=int, default=0, help="stop --watch after N cycles (0: never)")

    def run_from_argv(self, argv: list[str]) -> None:
        # call_command returns normally; from the shell, the exit code says how it went.
        super().run_from_argv(argv)
        sys.exit(self.exit_code)

    def handle(self, *args, source: str, path: str, space: str, user: str | None, dry_run: bool,
               as_json: bool, no_progress: bool, watch: bool, interval: float, cycles: int,
               **options) -> None:
        history = Path(path).expanduser()
        problem = readable(history)
        if problem is not None:
            raise CommandError(f"Cannot read {history}: {problem}.", returncode=USAGE)
        if watch and dry_run:
            raise CommandError("--watch imports; it cannot be a dry run.", returncode=USAGE)
        try:
            actor = self._actor(user)
            if space == personal.PERSONAL_SLUG and not dry_run:
                prepared = personal.personal_space_for_import(username=user, source=source)
                if prepared is not None:
                    self.stderr.write(prepared.describe(source))
            if watch:
                self._watch(Watcher(actor=actor, space=space, source=source, path=history),
                            interval=interval, cycles=cycles)
            else:
                self._once(actor, space, source, history, dry_run=dry_run, as_json=as_json,
                           no_progress=no_progress)
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=USAGE) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=REFUSED) from exc
        except OSError as exc:  # a file inside the folder that cannot be read
            raise CommandError(f"Cannot read {getattr(exc, 'filename', '') or history}: "
                               f"{exc.strerror or type(exc).__name__}.", returncode=USAGE) from exc

    def _actor(self, user: str | None) -> Actor:
        if not user:
            return SYSTEM
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise InvalidInput(f"No user '{user}'.")
        return found

    def _once(self, actor: Actor, space: str, source: str, history: Path, *, dry_run: bool, as_json: bool,
              no_progress: bool) -> None:
        shown = not no_progress and sys.stderr.isatty()
        # The total (for the ETA) costs a quick first pass; only worth it when a bar is shown.
        total = ingest.count(source, history) if shown else None
        bar = tqdm(total=total, unit=" conversations", file=sys.stderr, disable=not shown, dynamic_ncols=True)
        started = time.monotonic()

        def progress(report: ingest.ChatImportReport) -> None:
            bar.set_postfix(exchanges=report.exchanges, created=report.memories_created,
                            unchanged=report.conversations_skipped, errors=len(report.errors), refresh=False)
            bar.update(1)

        import_id = "" if dry_run else new_chat_import_id()
        try:
            report = ingest.chat_import(actor=actor, space_slug=space, source=source, path=history,
                                        dry_run=dry_run, progress=progress, import_id=import_id)
        finally:
            bar.close()
        seconds = time.monotonic() - started
        state = selectors.import_progress(import_id=import_id) if import_id else None
        self.exit_code = ITEMS_FAILED if report.errors else OK
        if as_json:
            extra = {"seconds": round(seconds, 2), "progress": state.as_dict() if state else None}
            self.stdout.write(json.dumps(report.as_dict() | extra, indent=2))
            return
        self.stdout.write(
            f"{report.conversations_seen} conversations ({report.conversations_skipped} unchanged), "
            f"{report.exchanges} exchanges, {report.memories_created} memories created, "
            f"{report.memories_reinforced} reinforced, {len(report.rejected)} rejected, "
            f"{len(report.errors)} unreadable items, in {seconds:.1f} s{' (dry run)' if dry_run else ''}")
        for error in report.errors[:50]:
            self.stdout.write(f"  {error['origin']} {error['item']}: {error['reason']}")
        if state is not None:
            self.stdout.write(progress_line(import_id, state))

    def _watch(self, watch_for: Watcher, *, interval: float, cycles: int) -> None:
        failed = False
        try:
            while True:
                try:
                    cycle = watch_for.cycle(import_id=new_chat_import_id())
                except DomainError as exc:
                    if watch_for.cycles == 1:  # refused from the start: a mistake to say, not to repeat
                        raise
                    # Paused since: its files stay unseen and are read once SAM takes them again.
                    self.stdout.write(f"cycle {watch_for.cycles}: refused, will try again: {exc.message}")
                else:
                    failed = failed or bool(cycle.report.errors)
                    self.stdout.write(cycle.line())
                self.stdout.flush()
                if cycles and watch_for.cycles >= cycles:
                    break
                time.sleep(interval)
        except KeyboardInterrupt:
            self.stdout.write(f"stopped after {watch_for.cycles} cycles")
        self.exit_code = ITEMS_FAILED if failed else OK


def progress_line(import_id: str, state: selectors.ImportProgress) -> str:
    """What is still to happen to the memories, so the person knows when they are final."""
    if state.final:
        return f"import {import_id}: final ({state.memories} memories embedded and checked)"
    return (f"import {import_id}: not final yet: {state.embedding_pending} of {state.memories} memories "
            f"wait for their embedding, {state.checks_pending} for their write checks "
            f"(the job worker finishes them: `make run` runs one)"
            + (f"; {state.embedding_failed} failed to embed (sam_reembed)" if state.embedding_failed else ""))
