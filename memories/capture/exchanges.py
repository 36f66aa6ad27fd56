"""A conversation as exchanges: what the user said and what came back, with the code blocks
kept whole and the entities picked out (seed 002 Phase 2)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memories.capture.conversation import Conversation

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


@dataclass
class Exchange:
    index: int
    user: str
    assistant: str
    at: datetime | None = None
    code_blocks: list[CodeBlock] = field(default_factory=list)
    entities: dict[str, list[str]] = field(default_factory=dict)


def split(conversation: Conversation) -> list[Exchange]:
    """One exchange per user message, with every assistant message up to the next one."""
    exchanges: list[Exchange] = []
    for message in conversation.messages:
        if message.role == "user" or not exchanges:
            said_by_user = message.role == "user"
            exchanges.append(Exchange(index=len(exchanges), user=message.text if said_by_user else "",
                                      assistant="" if said_by_user else message.text, at=message.at))
        else:
            current = exchanges[-1]
            current.assistant = f"{current.assistant}\n\n{message.text}".strip()
    for exchange in exchanges:
        text = f"{exchange.user}\n{exchange.assistant}"
        exchange.code_blocks = code_blocks(text)
        exchange.entities = entities(text, exchange.code_blocks)
    return exchanges


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
