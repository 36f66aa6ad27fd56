"""Claude Code session transcripts: one JSONL file per session.

Where they live: `~/.claude/projects/<project>/<session>.jsonl` (`~/.config/claude/projects/`
on some installs). Each line is one entry: `user`, `assistant`, `summary`, `system` and
bookkeeping types (`file-history-snapshot`, `queue-operation`, `progress`). What counts as
the conversation:

- a `user` entry whose content is text the person typed. Not: tool results (content blocks
  of type `tool_result`), meta lines (`isMeta`: caveats, notices), slash-command wrappers
  (`<command-name>`, `<local-command-stdout>`), compaction summaries (`isCompactSummary`);
- an `assistant` entry's `text` blocks. One reply is often spread over several lines that
  share `message.id` (one content block each): they are joined. `thinking` and `tool_use`
  blocks are left out;
- sidechains (`isSidechain`: a subagent's exchange with the main agent, inline or in an
  `agent-*.jsonl` file) are skipped: their prompts are the agent's, not the person's;
- a `summary` line names the conversation whose last entry is its `leafUuid`; a summary that
  points into another session names nothing here.

A line that is not JSON (a file cut off mid-write) is an item error; the rest is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memories.capture.conversation import Conversation, ItemError, Message, json_lines, timestamp

SOURCE = "claude_code"
_WRAPPERS = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
             "<command-args>", "Caveat: The messages below were generated")


def files(path: Path) -> list[Path]:
    """The session files under `path` (a file, a project folder or `projects/`), subagents out."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.jsonl") if not p.name.startswith("agent-")
                  and "subagents" not in p.parts)


def count(path: Path) -> int:
    return len(files(path))


def read(path: Path) -> Iterator[Conversation | ItemError]:
    for file in files(path):
        yield from _read_file(file)


def _text_of(content: Any) -> str:
    """The typed or written text of a message: its `text` blocks (tool traffic and thinking out)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(block["text"] for block in content if isinstance(block, dict)
                     and block.get("type") == "text" and isinstance(block.get("text"), str))


def _read_file(file: Path) -> Iterator[Conversation | ItemError]:
    conversation = Conversation(source=SOURCE, key=file.stem, origin=str(file))
    uuids: set[str] = set()
    titles: dict[str, str] = {}
    last_uuid = ""
    reply_id = None
    for read in json_lines(file):
        if isinstance(read, ItemError):
            yield read
            continue
        entry = read[1]
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "summary":
            if isinstance(entry.get("summary"), str):
                titles[str(entry.get("leafUuid"))] = entry["summary"]
            continue
        if kind not in ("user", "assistant") or entry.get("isSidechain"):
            continue
        if isinstance(entry.get("sessionId"), str):
            conversation.key = entry["sessionId"]
        if entry.get("uuid"):
            uuids.add(str(entry["uuid"]))
            last_uuid = str(entry["uuid"])
        message: dict[str, Any] = entry["message"] if isinstance(entry.get("message"), dict) else {}
        text = _text_of(message.get("content"))
        at = timestamp(entry.get("timestamp"))
        if kind == "user":
            reply_id = None
            # No text: tool results only. Meta lines, compaction summaries and command
            # wrappers are not what the person typed.
            if entry.get("isMeta") or entry.get("isCompactSummary") or not text.strip():
                continue
            if text.lstrip().startswith(_WRAPPERS):
                continue
            conversation.messages.append(Message("user", text.strip(), at))
            continue
        if not text.strip():
            continue
        if reply_id is not None and message.get("id") == reply_id and conversation.messages \
                and conversation.messages[-1].role == "assistant":
            conversation.messages[-1].text += "\n" + text.strip()
        else:
            conversation.messages.append(Message("assistant", text.strip(), at))
        reply_id = message.get("id")
    # Only a summary of this session's last entry names it (others point into other sessions).
    conversation.title = titles.get(last_uuid, "") or next(
        (title for leaf, title in titles.items() if leaf in uuids), "")
    if conversation.messages:
        yield conversation
