"""A conversation as exchanges: what the user said and what came back, with the code blocks
kept whole and the entities picked out (seed 002 Phase 2).

What came back is the assistant's whole side, in order (`steps`): its text, its tool calls
and their results. A tool's result (a message of role "tool") never starts an exchange: it
answers the assistant, not the user. `assistant` stays the assistant's text alone, which is
what the text rules read."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from memories.capture import tools
from memories.capture.conversation import Conversation, Message, ToolCall, ToolResult

_CODE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\."
                   r"(?:py|js|ts|tsx|jsx|go|rs|java|kt|rb|php|cs|c|h|cpp|hpp|swift|sql|md|json|ya?ml|toml|ini|"
                   r"cfg|sh|html|css|scss|vue|svelte|lock)\b")
_ERROR = re.compile(r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\[E\d+\]|\bFATAL\b|\bpanic\b)[^\n]{0,160}")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)
_INSTALL = re.compile(r"\b(?:pip|uv pip|poetry|npm|pnpm|yarn|cargo|gem|go) (?:install|add|get)\s+"
                      r"((?:[@\w./-]+(?:==[\w.]+)?\s*)+)")
_SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "powershell", "ps1", "cmd"}


@dataclass(frozen=True)
class CodeBlock:
    language: str
    code: str


@dataclass(frozen=True)
class Step:
    """One thing on the assistant's side of an exchange: its text, a tool call, or a result."""

    kind: str  # text | call | result
    turn: str = ""  # the id of the message it is part of
    text: str = ""
    call: ToolCall | None = None
    result: ToolResult | None = None


@dataclass
class Exchange:
    index: int
    user: str
    assistant: str
    at: datetime | None = None
    code_blocks: list[CodeBlock] = field(default_factory=list)
    entities: dict[str, list[str]] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)  # the ids of its messages, in order (user first)


def split(conversation: Conversation) -> list[Exchange]:
    """One exchange per user message, with every assistant and tool message up to the next one."""
    exchanges: list[Exchange] = []
    for message in conversation.messages:
        if message.role == "user" or not exchanges:
            said_by_user = message.role == "user"
            exchanges.append(Exchange(index=len(exchanges), user=message.text if said_by_user else "",
                                      assistant="", at=message.at))
            if said_by_user:
                exchanges[-1].turns.append(message.id)
                continue
        current = exchanges[-1]
        current.turns.append(message.id)
        current.steps += _steps(message)
        if message.role == "assistant":
            current.assistant = f"{current.assistant}\n\n{message.text}".strip()
    for exchange in exchanges:
        text = f"{exchange.user}\n{exchange.assistant}"
        exchange.code_blocks = code_blocks(text)
        exchange.entities = entities(text, exchange.code_blocks)
        _add_tool_entities(exchange)
    return exchanges


def redacted(exchange: Exchange, redact: Callable[[str], str]) -> Exchange:
    """A copy of `exchange` whose words, tool inputs and tool outputs went through `redact`
    (as SAM would store them), for what leaves SAM (the model extractor)."""
    def call(value: ToolCall) -> ToolCall:
        given = {key: redact(v) if isinstance(v, str) else v for key, v in value.input.items()}
        return ToolCall(value.id, value.name, given)

    steps = [Step(step.kind, step.turn, redact(step.text) if step.text else "",
                  call(step.call) if step.call else None,
                  ToolResult(step.result.call_id, redact(step.result.text), step.result.is_error)
                  if step.result else None) for step in exchange.steps]
    return Exchange(index=exchange.index, user=redact(exchange.user), assistant=redact(exchange.assistant),
                    at=exchange.at, steps=steps, turns=list(exchange.turns))


def _steps(message: Message) -> list[Step]:
    if message.role == "tool":
        return [Step("result", message.id, result.text, result=result) for result in message.tool_results]
    found = [Step("text", message.id, message.text)] if message.text else []
    return found + [Step("call", message.id, call=call) for call in message.tool_calls]


def _add_tool_entities(exchange: Exchange) -> None:
    """Files the assistant changed, commands it ran and the errors those runs met."""
    calls = {step.call.id: step.call for step in exchange.steps if step.call is not None}
    ran = [tools.command(call) for call in calls.values()]
    changed = [change.file for call in calls.values() for change in tools.changes(call)]
    failures = [tools.signature(step.result.text) for step in exchange.steps if step.result is not None
                and step.result.call_id in calls and tools.command(calls[step.result.call_id])
                and tools.failed(step.result)]
    found = exchange.entities
    for key, values, limit in (("files", changed, 20), ("commands", ran, 20), ("errors", failures, 10)):
        found[key] = _unique(found.get(key, []) + values, limit=limit)


def code_blocks(text: str) -> list[CodeBlock]:
    return [CodeBlock(language=(m.group(1) or "").lower(), code=m.group(2).rstrip())
            for m in _CODE.finditer(text)]


def _unique(values: list[str], limit: int = 20) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in values if v.strip()))[:limit]


def entities(text: str, blocks: list[CodeBlock]) -> dict[str, list[str]]:
    """File paths, shell commands, error lines and libraries named in an exchange."""
    commands = [line.lstrip("$ ").strip() for block in blocks if block.language in _SHELL_LANGUAGES
                for line in block.code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    commands += [m.group(1) for m in re.finditer(r"^\s*\$ (.+)$", text, re.MULTILINE)]
    libraries = [m.group(1) or m.group(2) for m in _IMPORT.finditer(text)]
    libraries += [name.split("==")[0] for m in _INSTALL.finditer(text) for name in m.group(1).split()]
    return {
        "files": _unique(_PATH.findall(text)),
        "commands": _unique(commands),
        "errors": _unique([m.group(0) for m in _ERROR.finditer(text)], limit=10),
        "libraries": _unique([name.split(".")[0] for name in libraries if not name.startswith("-")]),
    }
