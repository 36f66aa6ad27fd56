"""SAM's generic chat format: JSON Lines, one message a line (docs/capture.md).

    {"conversation_id": "c1", "role": "user", "content": "…", "time": "2026-03-01T10:00:00Z"}

`role` is `user` or `assistant` (`system` and others are skipped); `time` is ISO 8601 or
Unix seconds and optional; `title` on any line names the conversation. Lines of one
conversation may be anywhere in the file, in the order they were said. A line that is not
JSON, or lacks `conversation_id`, `role` or `content`, is an item error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memories.capture.conversation import Conversation, ItemError, Message, json_lines, timestamp

SOURCE = "jsonl"


def files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(path.rglob("*.jsonl"))


def read(path: Path) -> Iterator[Conversation | ItemError]:
    for file in files(path):
        yield from _read_file(file)


def _read_file(file: Path) -> Iterator[Conversation | ItemError]:
    # Messages are grouped by conversation, so one file's conversations are held until its
    # end: split a very large history into several files.
    conversations: dict[str, Conversation] = {}
    for read in json_lines(file):
        if isinstance(read, ItemError):
            yield read
            continue
        number, entry = read
        missing = [name for name in ("conversation_id", "role", "content")
                   if not isinstance(entry, dict) or entry.get(name) in (None, "")]
        if missing:
            yield ItemError(str(file), f"line {number}", f"missing {', '.join(missing)}")
            continue
        key = str(entry["conversation_id"])
        conversation = conversations.setdefault(
            key, Conversation(source=SOURCE, key=key, origin=str(file)))
        if entry.get("title"):
            conversation.title = str(entry["title"])
        if entry["role"] in ("user", "assistant"):
            conversation.messages.append(Message(entry["role"], str(entry["content"]).strip(),
                                                 timestamp(entry.get("time"))))
    yield from (c for c in conversations.values() if c.messages)
