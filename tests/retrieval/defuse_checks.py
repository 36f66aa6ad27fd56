"""What counts as a hazard left in defused text: checks written apart from the defusing
step's own rules, so a case passes only when its output is clean, not merely when the step
says it found something.

A hazard counts as neutralised when (1) the step reports a finding of a matching kind and
(2) the check below finds no trace of it in the output's prose. Fenced code is data and
stays as written, less hidden characters, and with the text of its comments defused: so the
tool-call and link checks read prose only; the character, fake-system and instruction checks
read everything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"

# Which findings answer which labelled hazard.
KINDS_FOR: dict[str, set[str]] = {
    "instruction": {"instruction"},
    "fake_system": {"chat_template", "role_marker"},
    "tool_call": {"tool_call"},
    "exfil_link": {"exfil_link", "exfil_image", "html"},
    "invisible": {"invisible", "tag_chars", "control"},
    "bidi": {"bidi"},
}

_FENCED = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})[^\n]*\n.*?^[ ]{0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_HIDDEN = re.compile("[\u200b\u2060-\u2064\ufeff\u00ad\u180e\U000e0000-\U000e007f]")
_JOINER_BY_ASCII = re.compile(r"[\x00-\x7f][\u200c\u200d]|[\u200c\u200d][\x00-\x7f]|[\u200c\u200d]{2}")
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]|[\u200e\u200f\u061c]{2,}")
_FAKE_SYSTEM = re.compile(
    r"<\|[^|\n]{1,40}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|developer|im_start|im_end)\b[^>]*>"
    r"|^[ \t>*#]*\**(?:system|assistant|developer)\**[ \t]*:|\bSYSTEM\s*:",
    re.IGNORECASE | re.MULTILINE)
_TOOL_CALL = re.compile(
    r"</?(?:tool_call|tool_use|function_calls?|invoke|function=|parameter)\b"
    r"|\{\s*\"(?:name|tool|tool_name|function|tool_calls|function_call|type|recipient_name)\"\s*:",
    re.IGNORECASE)
_REMOTE = r"(?:https?:)?//"
_EXFIL = re.compile(
    rf"!\[[^\]\n]*\]\(\s*<?{_REMOTE}"                       # a remote Markdown image
    rf"|<img\b|<\s*(?:iframe|script)\b"                       # HTML that fetches
    rf"|\[[^\]\n]*\]\(\s*<?{_REMOTE}[^)\s]*[?{{$][^)]*\)"      # a link with a query or template
    rf"|^\s*\[[^\]\n]+\]:\s*{_REMOTE}\S*[?{{$]"               # a reference definition with one
    r"|https?://\S*(?:\{[^}\s]*\}|\$\{?[A-Za-z_]|%7B)",       # a bare address with a template
    re.IGNORECASE | re.MULTILINE)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*"
    r"(?:previous|prior|above|earlier|preceding|system|safety|original|initial)?\s*"
    r"(?:instructions|prompts?|rules|guidelines|directives)"
    r"|\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bdeveloper\s+mode\b|\bdo\s+anything\s+now\b"
    r"|\b(?:reveal|print|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+prompt|instructions)",
    re.IGNORECASE)


def prose(text: str) -> str:
    return _FENCED.sub("", text)


def hazard_left(hazard: str, text: str) -> str | None:
    """The trace of `hazard` left in `text` (what the check found), or None when clean."""
    if hazard == "invisible":
        match = _HIDDEN.search(text) or _JOINER_BY_ASCII.search(text) or _SELECTOR_RUN.search(text)
    elif hazard == "bidi":
        match = _BIDI.search(text)
    elif hazard == "fake_system":
        match = _FAKE_SYSTEM.search(text)
    elif hazard == "tool_call":
        match = _TOOL_CALL.search(prose(text))
    elif hazard == "exfil_link":
        match = _EXFIL.search(prose(text))
    elif hazard == "instruction":
        match = _INSTRUCTION.search(text)
    else:
        raise ValueError(f"unknown hazard {hazard!r}")
    return match.group() if match else None


def neutralised(hazard: str, output: str, findings: list[str]) -> bool:
    return bool(KINDS_FOR[hazard] & set(findings)) and hazard_left(hazard, output) is None


def load(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
