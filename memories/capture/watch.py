"""Watch a history and import what changed since the last look (`sam_chat_import --watch`).

Each cycle lists the history's files and compares each one's size and modification time
with what the previous cycle saw; only files that changed are read again. Reading one that
did not really change would cost time, not memories: the watermarks make a re-read a no-op
(docs/capture.md, "Incremental and idempotent"). A Cursor store writes through its SQLite
write-ahead log first, so the `-wal` file beside it counts as part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from core.actor import Actor
from memories.capture import ingest

# Sources whose files each hold whole conversations: a changed file is read alone. SAM's
# JSONL groups a conversation's lines across a folder's files, so it is read whole.
ONE_CONVERSATION_PER_FILE = frozenset({"claude_code", "chatgpt", "cursor"})
Signature = tuple[tuple[int, int], ...]


def signature(file: Path) -> Signature:
    """Size and mtime (ns) of the file and of its SQLite write-ahead log, when there is one."""
    parts = [file, file.with_name(file.name + "-wal")]
    return tuple((s.st_size, s.st_mtime_ns) for s in (p.stat() for p in parts if p.exists()))


@dataclass
class Cycle:
    number: int
    files_changed: int
    report: ingest.ChatImportReport

    def line(self) -> str:
        r = self.report
        if not self.files_changed:
            return f"cycle {self.number}: nothing changed"
        return (f"cycle {self.number}: {self.files_changed} files changed, "
                f"{r.conversations_seen} conversations ({r.conversations_skipped} unchanged), "
                f"{r.exchanges} new exchanges, "
                f"{r.memories_created} memories created, {r.memories_reinforced} reinforced, "
                f"{len(r.errors)} unreadable items")


def _add(total: ingest.ChatImportReport, part: ingest.ChatImportReport) -> None:
    for f in fields(total):
        value = getattr(part, f.name)
        if isinstance(value, int) and not isinstance(value, bool):
            setattr(total, f.name, getattr(total, f.name) + value)
        elif isinstance(value, list):
            getattr(total, f.name).extend(value)


@dataclass
class Watcher:
    """What one history looked like at the last cycle, and the cycles that read its changes."""

    actor: Actor
    space: str
    source: str
    path: Path
    seen: dict[Path, Signature] = field(default_factory=dict)
    cycles: int = 0

    def changed(self) -> tuple[dict[Path, Signature], list[Path]]:
        now = {}
        for file in ingest.READERS[self.source].files(self.path):
            try:
                now[file] = signature(file)
            except FileNotFoundError:  # removed while listed
                continue
        return now, [f for f, s in now.items() if self.seen.get(f) != s]

    def cycle(self, *, import_id: str) -> Cycle:
        """Import what changed since the last cycle. A file is marked seen only once its import
        went through: one a refusal stopped (a paused space) is read again next time."""
        self.cycles += 1
        now, changed = self.changed()
        self.seen = {f: s for f, s in self.seen.items() if f in now}
        total = ingest.ChatImportReport(source=self.source, space=self.space, import_id=import_id)
        if not changed:
            return Cycle(self.cycles, 0, total)
        # The first look reads the history in one import; later ones only the files that changed.
        whole = not self.seen or self.source not in ONE_CONVERSATION_PER_FILE
        for target in [self.path] if whole else changed:
            _add(total, ingest.chat_import(actor=self.actor, space_slug=self.space, source=self.source,
                                           path=target, import_id=import_id))
            self.seen.update({f: now[f] for f in (changed if whole else [target])})
        return Cycle(self.cycles, len(changed), total)
