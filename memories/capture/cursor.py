"""Cursor's chat stores: `state.vscdb`, an SQLite key-value database.

Supported, as reverse-engineered by public parsers of Cursor's storage:

- Composer / agent chats (Cursor 0.43 on; `composerData` schema versions 1–10), in the
  global database (`globalStorage/state.vscdb`, table `cursorDiskKV`): `composerData:<id>`
  holds the conversation, either inline (`conversation`, older versions) or as headers
  (`fullConversationHeadersOnly`, newer) whose messages are `bubbleId:<id>:<bubble>` rows.
  A bubble of `type` 1 is the user, 2 the assistant; its `text` is what was said, its
  `bubbleId` the message's id. An agent's tool use rides on an assistant bubble as
  `toolFormerData` (`name`, arguments as JSON in `rawArgs` or `params`, `result`, `status`,
  `toolCallId`; reverse-engineered, best effort): it becomes the bubble's ToolCall, and its
  result a message of role "tool" (an error when the status or the exit code says so).
- Older chat panels, in a workspace database (`workspaceStorage/<hash>/state.vscdb`, table
  `ItemTable`): `workbench.panel.aichat.view.aichat.chatdata`, tabs of bubbles of type
  `user` or `ai`.

The file is opened read-only. A file that is not an SQLite database, or one without either
table, is one item error; a conversation whose schema version is newer than those above, or
whose JSON is broken, is one item error, and the others are read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memories.capture.conversation import (
    Conversation,
    ItemError,
    Message,
    Role,
    ToolCall,
    ToolResult,
    clipped,
    timestamp,
)

SOURCE = "cursor"
COMPOSER_VERSIONS = range(1, 11)
CHAT_PANEL_KEY = "workbench.panel.aichat.view.aichat.chatdata"
ROLES: dict[object, Role] = {1: "user", 2: "assistant", "user": "user", "ai": "assistant"}


def files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(path.rglob("state.vscdb"))


def count(path: Path) -> int:
    total = 0
    for file in files(path):
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT count(*) FROM cursorDiskKV WHERE key LIKE 'composerData:%'").fetchone()
            total += row[0]
        finally:
            db.close()
    return total


def read(path: Path) -> Iterator[Conversation | ItemError]:
    for file in files(path):
        yield from _read_file(file)


def _read_file(file: Path) -> Iterator[Conversation | ItemError]:
    try:
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        yield ItemError(str(file), "database", f"not a readable SQLite database ({exc})")
        return
    try:
        if not tables & {"cursorDiskKV", "ItemTable"}:
            yield ItemError(str(file), "database", "no cursorDiskKV or ItemTable table: not a Cursor store")
            return
        if "cursorDiskKV" in tables:
            yield from _composers(db, file)
        if "ItemTable" in tables:
            yield from _chat_panel(db, file)
    except sqlite3.DatabaseError as exc:
        yield ItemError(str(file), "database", f"the database is damaged ({exc})")
    finally:
        db.close()


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return json.loads(value) if isinstance(value, str) else None


def _composers(db: sqlite3.Connection, file: Path) -> Iterator[Conversation | ItemError]:
    rows = db.execute("SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%' ORDER BY key")
    for key, value in rows:
        composer_id = key.split(":", 1)[1]
        try:
            data = _json(value)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            version = data.get("_v", 1)
            if version not in COMPOSER_VERSIONS:
                supported = f"{COMPOSER_VERSIONS.start}–{COMPOSER_VERSIONS.stop - 1}"
                yield ItemError(str(file), key,
                                f"composer schema version {version} is not supported (versions {supported})")
                continue
            bubbles = data.get("conversation")
            if not bubbles:
                bubbles = list(_bubbles(db, composer_id, data.get("fullConversationHeadersOnly") or []))
        except (ValueError, TypeError) as exc:
            yield ItemError(str(file), key, f"unreadable conversation ({exc})")
            continue
        conversation = Conversation(source=SOURCE, key=composer_id, origin=str(file),
                                    title=str(data.get("name") or ""))
        at = timestamp(data.get("createdAt"))
        for bubble in bubbles:
            if isinstance(bubble, dict):
                conversation.messages += _messages(bubble, at)
        if any(m.role != "tool" for m in conversation.messages):
            yield conversation


def _messages(bubble: dict[str, Any], at: Any) -> list[Message]:
    """A bubble's message, with its tool call and the call's result when the bubble holds one."""
    role = ROLES.get(bubble.get("type"))
    if role is None:
        return []
    text = str(bubble.get("text") or "").strip()
    when = timestamp(bubble.get("createdAt")) or at
    turn = str(bubble.get("bubbleId") or "")
    tool = bubble.get("toolFormerData") if role == "assistant" else None
    call = _tool_call(tool, turn) if isinstance(tool, dict) else None
    found = [Message(role, text, when, tool_calls=[call] if call else [], id=turn)] if text or call else []
    result = _tool_result(tool, call) if call is not None and isinstance(tool, dict) else None
    if result is not None:
        found.append(Message("tool", result.text, when, tool_results=[result], id=turn))
    return found


def _loose_json(value: Any) -> Any:
    """Arguments and results are JSON inside a string, or already an object, or plain text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _tool_call(tool: dict[str, Any], turn: str) -> ToolCall | None:
    name = tool.get("name") or tool.get("tool")
    if not isinstance(name, str) or not name:
        return None
    arguments = _loose_json(tool.get("rawArgs") or tool.get("params") or {})
    return ToolCall(id=str(tool.get("toolCallId") or turn), name=name,
                    input=arguments if isinstance(arguments, dict) else {"arguments": str(arguments)})


_OUTPUT_KEYS = ("output", "stdout", "contents", "content", "text", "result", "diff", "error", "stderr")
_EXIT_KEYS = ("exitCode", "exitCodeV2", "exit_code", "returnCode")


def _tool_result(tool: dict[str, Any], call: ToolCall) -> ToolResult | None:
    result = _loose_json(tool.get("result"))
    extra = tool.get("additionalData")
    extra_status = extra.get("status") if isinstance(extra, dict) else None
    failed = "error" in (str(tool.get("status")), str(extra_status))
    if isinstance(result, dict):
        exits = [result[key] for key in _EXIT_KEYS if isinstance(result.get(key), int)]
        failed = failed or any(code != 0 for code in exits)
        parts = [str(result[key]) for key in _OUTPUT_KEYS if isinstance(result.get(key), str | int | float)
                 and str(result[key]).strip()]
        text = "\n".join(parts) or json.dumps(result)[:2000]
    else:
        text = "" if result is None else str(result)
    if not text.strip() and not failed:
        return None
    return ToolResult(call_id=call.id, text=clipped(text.strip()), is_error=failed)


def _bubbles(db: sqlite3.Connection, composer_id: str, headers: list[Any]) -> Iterator[dict[str, Any]]:
    for header in headers:
        bubble_id = header.get("bubbleId") if isinstance(header, dict) else None
        if not bubble_id:
            continue
        row = db.execute("SELECT value FROM cursorDiskKV WHERE key = ?",
                         [f"bubbleId:{composer_id}:{bubble_id}"]).fetchone()
        bubble = _json(row[0]) if row else None
        if isinstance(bubble, dict):
            yield {"type": bubble.get("type", header.get("type")), "bubbleId": bubble_id, **bubble}


def _chat_panel(db: sqlite3.Connection, file: Path) -> Iterator[Conversation | ItemError]:
    row = db.execute("SELECT value FROM ItemTable WHERE key = ?", [CHAT_PANEL_KEY]).fetchone()
    if row is None:
        return
    try:
        data = _json(row[0])
        tabs = data.get("tabs") if isinstance(data, dict) else None
        if not isinstance(tabs, list):
            raise ValueError("no tabs")
    except (ValueError, TypeError) as exc:
        yield ItemError(str(file), CHAT_PANEL_KEY, f"unreadable chat panel data ({exc})")
        return
    for tab in tabs:
        if not isinstance(tab, dict):
            continue
        conversation = Conversation(source=SOURCE, key=str(tab.get("tabId") or ""), origin=str(file),
                                    title=str(tab.get("chatTitle") or ""))
        for bubble in tab.get("bubbles") or []:
            role = ROLES.get(bubble.get("type")) if isinstance(bubble, dict) else None
            text = str(bubble.get("text") or bubble.get("rawText") or "").strip() if role else ""
            if role and text:
                conversation.messages.append(Message(role, text, id=str(bubble.get("id") or "")))
        if conversation.key and conversation.messages:
            yield conversation
