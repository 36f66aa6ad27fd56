"""Claude Code session transcripts: one JSONL file per session.

Where they live: `~/.claude/projects/<project>/<session>.jsonl` (`~/.config/claude/projects/`
on some installs). Each line is one entry: `user`, `assistant`, `summary`, `system` and
bookkeeping types (`file-history-snapshot`, `queue-operation`, `progress`). What counts as
the conversation, each message carrying its entry's `uuid` as its id (the turn evidence
points at):

- a `user` entry whose content is text the person typed. Not: meta lines (`isMeta`: caveats,
  notices), slash-command wrappers (`<command-name>`, `<local-command-stdout>`), compaction
  summaries (`isCompactSummary`);
- a `user` entry's `tool_result` blocks: a message of role "tool" with one ToolResult per
  block (`is_error`, the text of a string or of a list of text blocks, clipped to its head
  and tail: a failing run's error and summary sit at both ends);
- an `assistant` entry's `text` blocks and `tool_use` blocks (ToolCall: id, name, input). One
  reply is often spread over several lines that share `message.id` (one content block each):
  they are joined. `thinking` blocks are left out;
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

from memories.capture.conversation import (
    Conversation,
    ItemError,
    Message,
    ToolCall,
    ToolResult,
    clipped,
    json_lines,
    timestamp,
)

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


def _tool_calls(content: Any) -> list[ToolCall]:
    if not isinstance(content, list):
        return []
    return [ToolCall(id=str(block.get("id") or ""), name=str(block.get("name") or ""),
                     input=block["input"] if isinstance(block.get("input"), dict) else {})
            for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]


def _tool_results(content: Any) -> list[ToolResult]:
    if not isinstance(content, list):
        return []
    return [ToolResult(call_id=str(block.get("tool_use_id") or ""),
                       text=clipped(_text_of(block.get("content"))), is_error=bool(block.get("is_error")))
            for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


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
        turn = str(entry.get("uuid") or "")
        if turn:
            uuids.add(turn)
            last_uuid = turn
        message: dict[str, Any] = entry["message"] if isinstance(entry.get("message"), dict) else {}
        content = message.get("content")
        text = _text_of(content)
        at = timestamp(entry.get("timestamp"))
        if kind == "user":
            reply_id = None
            # Meta lines, compaction summaries and command wrappers are not what the person typed.
            if entry.get("isMeta") or entry.get("isCompactSummary"):
                continue
            results = _tool_results(content)
            if results:
                conversation.messages.append(Message("tool", "\n".join(r.text for r in results), at,
                                                     tool_results=results, id=turn))
            if text.strip() and not text.lstrip().startswith(_WRAPPERS):
                conversation.messages.append(Message("user", text.strip(), at, id=turn))
            continue
        calls = _tool_calls(content)
        if not text.strip() and not calls:
            continue  # thinking only
        last = conversation.messages[-1] if conversation.messages else None
        if reply_id is not None and message.get("id") == reply_id and last is not None \
                and last.role == "assistant":
            last.text = "\n".join(part for part in (last.text, text.strip()) if part)
            last.tool_calls.extend(calls)
        else:
            conversation.messages.append(Message("assistant", text.strip(), at, tool_calls=calls, id=turn))
        reply_id = message.get("id")
    # Only a summary of this session's last entry names it (others point into other sessions).
    conversation.title = titles.get(last_uuid, "") or next(
        (title for leaf, title in titles.items() if leaf in uuids), "")
    if any(m.role != "tool" for m in conversation.messages):
        yield conversation
