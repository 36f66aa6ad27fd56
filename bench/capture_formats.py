"""Labelled conversations as the files the real tools write, and read back through SAM's readers.

The labelled corpus (its format: one JSON object a line with `source`, `messages` of role
user / assistant / tool, tool calls and results; see the corpus's FORMAT.md) says what a
conversation was. SAM reads source files: a Claude Code session JSONL, a ChatGPT export, a
Cursor `state.vscdb`. These converters write each row as its source would have, so an
evaluation goes through the same reader an import does:

- `to_claude_code(row, folder)`: `<folder>/<project>/<session>.jsonl`, one entry a line with
  `uuid`, `parentUuid`, `sessionId`, `timestamp`, `message` (an assistant reply as one line
  per content block sharing `message.id`: text, then `tool_use`; each tool result a `user`
  entry with a `tool_result` block and `is_error`);
- `to_chatgpt(rows, folder)`: `<folder>/conversations.json`, each conversation a `mapping`
  tree from a root to `current_node`;
- `to_cursor(rows, folder)`: `<folder>/state.vscdb` with `composerData:<id>` (schema 10,
  headers only) and `bubbleId:<id>:<bubble>` rows; an agent's tool call is a bubble with
  `toolFormerData` (Cursor's own tool names: `run_terminal_cmd`, `search_replace`, …);
- `read_back(row)`: the row written as its source and read back as a `Conversation`
  ("chat" rows go through SAM's generic JSONL).

Each message's id in the written file is `turn_id(row, index)`, so a turn id found in
evidence leads back to the labelled message.

    .venv/bin/python bench/capture_formats.py /path/to/labelled.jsonl …

prints how faithfully each source round-trips (messages, roles, words, tool traffic) and
what the tool solutions and accepted plans find in what was read back.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memories.capture import chatgpt, claude_code, cursor, jsonl  # noqa: E402
from memories.capture.conversation import Conversation  # noqa: E402

_NAMESPACE = uuid.UUID("6f1c2a4e-3b7d-4f0a-9c1e-5d2b8a7e4c10")
# Claude Code's tool names as Cursor's agent names them.
CURSOR_TOOLS = {"Bash": "run_terminal_cmd", "Edit": "search_replace", "MultiEdit": "search_replace",
                "Write": "write", "Read": "read_file", "Grep": "grep"}


def turn_id(row: dict[str, Any], index: int) -> str:
    """The id message `index` of `row` has in the files written here."""
    return str(uuid.uuid5(_NAMESPACE, f"{row['id']}:{index}"))


def _started(row: dict[str, Any]) -> datetime:
    value = str(row.get("started_at") or "2026-01-01T00:00:00Z").replace("Z", "+00:00")
    return datetime.fromisoformat(value).astimezone(UTC)


def _when(row: dict[str, Any], index: int, step: int = 0) -> datetime:
    return _started(row) + timedelta(seconds=20 * index + step)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# --- Claude Code ----------------------------------------------------------------------------


def to_claude_code(row: dict[str, Any], folder: Path) -> Path:
    """Write `row` as a Claude Code session file; return its path."""
    session = str(uuid.uuid5(_NAMESPACE, f"session:{row['id']}"))
    project = folder / f"-home-dev-{row.get('series') or 'project'}"
    project.mkdir(parents=True, exist_ok=True)
    common = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/project", "sessionId": session,
              "version": "2.0.31", "gitBranch": "main"}
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for index, message in enumerate(row["messages"]):
        for step, (kind, payload) in enumerate(_claude_entries(message, index)):
            entry_id = turn_id(row, index) if step == 0 else f"{turn_id(row, index)}-{step}"
            entry = {"parentUuid": parent, **common, "type": kind, "message": payload, "uuid": entry_id,
                     "timestamp": _iso(_when(row, index, step))}
            lines.append(entry)
            parent = entry_id
    file = project / f"{session}.jsonl"
    file.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return file


def _claude_entries(message: dict[str, Any], index: int) -> list[tuple[str, dict[str, Any]]]:
    role, text = message["role"], message.get("text") or ""
    if role == "user":
        return [("user", {"role": "user", "content": text})]
    if role == "tool":
        block = {"tool_use_id": message.get("tool_use_id", ""), "type": "tool_result", "content": text,
                 "is_error": bool(message.get("is_error"))}
        return [("user", {"role": "user", "content": [block]})]
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": call["id"], "name": call["name"], "input": call.get("input") or {}}
               for call in message.get("tool_calls") or []]
    reply = f"msg_{index:04d}"
    return [("assistant", {"id": reply, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [block]}) for block in blocks]


# --- ChatGPT --------------------------------------------------------------------------------


def to_chatgpt(rows: list[dict[str, Any]], folder: Path) -> Path:
    """Write `rows` as a ChatGPT data export's conversations.json; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "conversations.json"
    conversations = [_chatgpt_conversation(row) for row in rows]
    file.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
    return file


def _chatgpt_conversation(row: dict[str, Any]) -> dict[str, Any]:
    root = f"root-{row['id']}"
    mapping: dict[str, Any] = {root: {"id": root, "message": None, "parent": None, "children": []}}
    parent = root
    for index, message in enumerate(row["messages"]):
        if message["role"] not in ("user", "assistant"):
            continue  # a chat export's tool messages are not conversation
        node = turn_id(row, index)
        mapping[parent]["children"].append(node)
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": message["role"], "name": None, "metadata": {}},
            "create_time": _when(row, index).timestamp(), "update_time": None,
            "content": {"content_type": "text", "parts": [message.get("text") or ""]},
            "status": "finished_successfully", "end_turn": message["role"] == "assistant", "weight": 1.0,
            "metadata": {}, "recipient": "all"}}
        parent = node
    return {"title": row["id"], "create_time": _started(row).timestamp(), "update_time": _when(
        row, len(row["messages"])).timestamp(), "mapping": mapping, "current_node": parent,
        "conversation_id": row["id"], "id": row["id"], "is_archived": False}


# --- Cursor ---------------------------------------------------------------------------------


def to_cursor(rows: list[dict[str, Any]], folder: Path) -> Path:
    """Write `rows` as Cursor composers in a global `state.vscdb`; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "state.vscdb"
    db = sqlite3.connect(file)
    try:
        for table in ("cursorDiskKV", "ItemTable"):
            db.execute(f"CREATE TABLE IF NOT EXISTS {table} "
                       "(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        for row in rows:
            bubbles = _cursor_bubbles(row)
            composer = {"_v": 10, "composerId": row["id"], "name": row["id"], "status": "completed",
                        "createdAt": int(_started(row).timestamp() * 1000), "unifiedMode": "agent",
                        "fullConversationHeadersOnly": [{"bubbleId": b["bubbleId"], "type": b["type"]}
                                                        for b in bubbles]}
            db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", [f"composerData:{row['id']}",
                                                                 json.dumps(composer).encode()])
            for bubble in bubbles:
                db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)",
                           [f"bubbleId:{row['id']}:{bubble['bubbleId']}", json.dumps(bubble).encode()])
        db.commit()
    finally:
        db.close()
    return file


def _cursor_bubbles(row: dict[str, Any]) -> list[dict[str, Any]]:
    results = {m.get("tool_use_id"): m for m in row["messages"] if m["role"] == "tool"}
    bubbles = []
    for index, message in enumerate(row["messages"]):
        if message["role"] == "tool":
            continue  # carried by the bubble of its call, as Cursor stores it
        kind = 1 if message["role"] == "user" else 2
        base = {"_v": 3, "type": kind, "createdAt": _iso(_when(row, index))}
        if message.get("text") or not message.get("tool_calls"):
            bubbles.append({**base, "bubbleId": turn_id(row, index), "text": message.get("text") or ""})
        for number, call in enumerate(message.get("tool_calls") or []):
            bubbles.append({**base, "bubbleId": f"{turn_id(row, index)}-t{number}", "text": "",
                            "toolFormerData": _tool_former(call, results.get(call["id"]))})
    return bubbles


def _tool_former(call: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    given = dict(call.get("input") or {})
    name = CURSOR_TOOLS.get(call["name"], call["name"])
    if call["name"] == "Write":
        given = {"file_path": given.get("file_path"), "contents": given.get("content", "")}
    if call["name"] == "Read":
        given = {"target_file": given.get("file_path")}
    if call["name"] == "MultiEdit" and given.get("edits"):
        first = given["edits"][0]
        given = {"file_path": given.get("file_path"), "old_string": first.get("old_string"),
                 "new_string": first.get("new_string")}
    former: dict[str, Any] = {"tool": 0, "name": name, "toolCallId": call["id"], "rawArgs": json.dumps(given),
                              "status": "completed"}
    if result is not None:
        failed = bool(result.get("is_error"))
        output: dict[str, Any] = {"output": result.get("text") or ""}
        if name == "run_terminal_cmd":
            output["exitCodeV2"] = 1 if failed else 0
        former["result"] = json.dumps(output)
        former["status"] = "error" if failed else "completed"
    return former


# --- reading back ---------------------------------------------------------------------------


def read_back(row: dict[str, Any]) -> Conversation:
    """`row` written as its source would have and read back through SAM's reader for it."""
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        source = row["source"]
        if source == "claude_code":
            items = claude_code.read(to_claude_code(row, where))
        elif source == "chatgpt":
            items = chatgpt.read(to_chatgpt([row], where))
        elif source == "cursor":
            items = cursor.read(to_cursor([row], where))
        else:
            file = where / "chat.jsonl"
            file.write_text("".join(json.dumps({"conversation_id": row["id"], "role": m["role"],
                                                "content": m.get("text") or ""}) + "\n"
                                    for m in row["messages"] if m["role"] in ("user", "assistant")
                                    and m.get("text")), encoding="utf-8")
            items = jsonl.read(file)
        found = [item for item in items if isinstance(item, Conversation)]
    if len(found) != 1:
        raise ValueError(f"{row['id']}: read back {len(found)} conversations")
    return found[0]


def _faithful(row: dict[str, Any], read: Conversation) -> dict[str, bool]:
    """Whether what was read back says what the row said: the same user and assistant words in
    order, and every tool call and result (in the sources that have them)."""
    said = [(m["role"], m.get("text") or "") for m in row["messages"] if m["role"] in ("user", "assistant")
            and (m.get("text") or "").strip()]
    read_said = [(m.role, m.text) for m in read.messages if m.role != "tool" and m.text]
    calls = [c["id"] for m in row["messages"] for c in m.get("tool_calls") or []]
    results = [(m.get("tool_use_id"), bool(m.get("is_error"))) for m in row["messages"]
               if m["role"] == "tool"]
    read_calls = [c.id for m in read.messages for c in m.tool_calls]
    read_results = [(r.call_id, r.is_error) for m in read.messages for r in m.tool_results]
    with_tools = row["source"] in ("claude_code", "cursor")
    def flat(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(role, " ".join(text.split())) for role, text in turns]

    return {"words": flat(said) == flat(read_said),
            "tools": not with_tools or (read_calls == calls and read_results == results)}


def main(paths: list[str]) -> None:
    from collections import Counter

    from memories.capture import exchanges, extract

    rows = [json.loads(line) for path in paths for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]
    seen: Counter[str] = Counter()
    faithful: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for row in rows:
        read = read_back(row)
        seen[row["source"]] += 1
        checks = _faithful(row, read)
        faithful[row["source"]] += all(checks.values())
        for candidate in extract.extract(exchanges.split(read)):
            if candidate.rule in ("tool_solution", "accepted_plan"):
                found[candidate.rule] += 1
    print("| source | rows | read back faithfully |\n|---|---|---|")
    for source in sorted(seen):
        print(f"| {source} | {seen[source]} | {faithful[source]} |")
    print(f"\ntool solutions: {found['tool_solution']}, accepted plans: {found['accepted_plan']}")


if __name__ == "__main__":
    main(sys.argv[1:])
