"""What every importer yields: conversations of messages, or an error about one item.

Importers stream: a parser yields one `Conversation` (or one `ItemError`) at a time and never
holds a whole export in memory. `key` names the conversation within its source, stable
across exports, so a re-import finds what it imported before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]
# How much of one tool result is kept: a test run's output can be megabytes, and what matters
# sits at both ends (the command's first error, the summary line at the bottom).
RESULT_CHARS = 4000


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str  # Bash, Edit, Write, MultiEdit, Read, Grep, ExitPlanMode, …
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    text: str
    is_error: bool = False


@dataclass
class Message:
    role: Role
    text: str
    at: datetime | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)  # assistant messages
    tool_results: list[ToolResult] = field(default_factory=list)  # role "tool" messages
    id: str = ""  # the turn's id in its source (Claude Code uuid, Cursor bubble id), for evidence


@dataclass
class Conversation:
    source: str  # claude_code | chatgpt | cursor | jsonl
    key: str  # the conversation's id in its source
    origin: str  # the file (and table) it was read from, for provenance
    title: str = ""
    messages: list[Message] = field(default_factory=list)
    # What the user said about themselves outside the conversation (ChatGPT's custom
    # instructions): read like a user message, never shown as one.
    profile: str = ""

    def fingerprint(self) -> str:
        """A hash of what was said: the same conversation exported again hashes the same.

        The user's and the assistant's words hash exactly as they did before tool traffic was
        read, and the tool traffic (when there is any) after them: a conversation without
        tools keeps the watermark an earlier import left."""
        digest = hashlib.sha256()
        digest.update(self.profile.encode())
        for message in self.messages:
            if message.role == "tool" or (not message.text and message.tool_calls):
                continue
            digest.update(json.dumps([message.role, message.text]).encode())
        traffic = [[[c.name, c.input] for c in m.tool_calls] + [[r.call_id, r.text, r.is_error]
                                                                for r in m.tool_results]
                   for m in self.messages if m.tool_calls or m.tool_results]
        if traffic:
            digest.update(json.dumps(traffic, sort_keys=True, default=str).encode())
        return digest.hexdigest()


@dataclass
class ItemError:
    """One item that could not be read: a line, a conversation, a file; the rest goes on."""

    origin: str
    item: str
    reason: str


def json_lines(file: Path) -> Iterator[tuple[int, Any] | ItemError]:
    """(line number, decoded value) for each non-blank line of a JSONL file, read as a stream;
    an ItemError for a line that is not JSON (a file cut off mid-write), and the rest goes on."""
    with file.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield ItemError(str(file), f"line {number}", f"not JSON ({exc.msg}); the line was skipped")


def timestamp(value: object) -> datetime | None:
    """A datetime from an ISO string or Unix seconds (or milliseconds); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def clipped(text: str, limit: int = RESULT_CHARS) -> str:
    """`text` within `limit` characters: its head and its tail, where a run's errors and its
    summary line sit, with a marker of what was left out between them."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"
