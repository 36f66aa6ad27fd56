"""ChatGPT's data export: `conversations.json`, or `conversations-000.json`, `-001`… in newer
exports (a folder or the files themselves).

Each file is a JSON array of conversations, streamed item by item (ijson), so a 200 MB
export never sits in memory whole. A conversation is a tree of message nodes (`mapping`,
each with `parent` and `children`): edits and regenerations are branches, and only the
branch that ends at `current_node` is the conversation. Kept: `user` and `assistant`
messages with content types `text`, `code` and `multimodal_text` (their text parts; images
are left out). Left out: `system` and `tool` messages, hidden ones
(`is_visually_hidden_from_conversation`), browsing, reasoning (`thoughts`,
`reasoning_recap`) and other content types without text. Custom instructions
(`user_editable_context`: "about me" and "how to answer") become the conversation's
profile: what the user said about themselves. Each message keeps its `id`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from memories.capture.conversation import Conversation, ItemError, Message, timestamp

SOURCE = "chatgpt"
TEXT_TYPES = ("text", "code", "multimodal_text")


def files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(path.rglob("conversations*.json"))  # at the export's root or in a folder


def count(path: Path) -> int:
    """A fast first pass (ijson's C backend) counting conversations."""
    total = 0
    for file in files(path):
        with file.open("rb") as handle:
            total += sum(1 for prefix, event, _ in ijson.parse(handle)
                         if prefix == "item" and event == "start_map")
    return total


def read(path: Path) -> Iterator[Conversation | ItemError]:
    found = files(path)
    if not found:
        yield ItemError(str(path), "export", "no conversations.json or conversations-NNN.json here")
    for file in found:
        yield from _read_file(file)


def _read_file(file: Path) -> Iterator[Conversation | ItemError]:
    position = 0
    try:
        with file.open("rb") as handle:
            for position, item in enumerate(ijson.items(handle, "item", use_float=True), start=1):
                try:
                    conversation = _conversation(item, file)
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    yield ItemError(str(file), f"conversation {position}", f"unreadable ({exc})")
                    continue
                if conversation is not None:
                    yield conversation
    except ijson.JSONError as exc:
        # A file cut off (or not JSON at all): what came before the break is kept.
        yield ItemError(str(file), f"after conversation {position}", f"the file is not valid JSON: {exc}")


def _parts_text(content: dict[str, Any]) -> str:
    kind = content.get("content_type")
    if kind == "code":
        return str(content.get("text") or "")
    if kind not in TEXT_TYPES:
        return ""
    return "\n".join(p for p in content.get("parts") or [] if isinstance(p, str)).strip()


def _profile(content: dict[str, Any]) -> str:
    about = str(content.get("user_profile") or "").strip()
    how = str(content.get("user_instructions") or "").strip()
    return "\n".join(part for part in (about, how) if part)


def _conversation(item: dict[str, Any], file: Path) -> Conversation | None:
    mapping = item["mapping"]
    key = str(item.get("conversation_id") or item.get("id") or "")
    if not key:
        raise ValueError("no conversation id")
    conversation = Conversation(source=SOURCE, key=key, origin=str(file), title=str(item.get("title") or ""))
    node_id = item.get("current_node")
    branch = []
    seen: set[str] = set()
    while node_id and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        branch.append(mapping[node_id])
        node_id = mapping[node_id].get("parent")
    for node in reversed(branch):
        message = node.get("message") or {}
        content = message.get("content") or {}
        role = (message.get("author") or {}).get("role")
        metadata = message.get("metadata") or {}
        if content.get("content_type") == "user_editable_context":
            conversation.profile = _profile(content)
            continue
        if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation"):
            continue
        text = _parts_text(content)
        if text:
            conversation.messages.append(Message(role, text, timestamp(message.get("create_time")),
                                                 id=str(message.get("id") or "")))
    return conversation if conversation.messages or conversation.profile else None
