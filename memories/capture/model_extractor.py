"""An optional extractor on any OpenAI-compatible chat endpoint, beside the rules.

Off unless SAM_EXTRACTOR_PROVIDER=openai (with SAM_EXTRACTOR_URL and SAM_EXTRACTOR_MODEL).
The conversation (the user's and the assistant's turns, numbered) goes to that endpoint with
seed 003's constraints: only what the user stated about themselves or their project, nothing
about the assistant, nothing ephemeral. It must answer strict JSON; SAM repairs the usual
damage (a code fence, a sentence around the object, trailing commas), retries what it cannot
read or what failed (timeouts, HTTP errors), and when every attempt fails it keeps the rules'
memories alone and says so in the report.

The model sees the whole exchange, compactly: besides the turns' text, each failing run's
telling line, each passing run's line, and the files the assistant edited, so it can see a
fix that only tools prove (docs/capture.md).

What the model proposes is held to the evidence: each memory must quote the user's own
words (`evidence`, found verbatim in that exchange's user message), or, for a solution, a
tool result of that exchange; name a known rule, and be sure enough
(SAM_EXTRACTOR_MIN_CONFIDENCE). What the rules found wins over a model memory that says the
same (seed 003: rules are the more precise).
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from memories.capture import extract, rules, tools
from memories.capture.exchanges import Exchange

# The rule a model's memory names: model:<rule>.
RULE_PREFIX = "model:"
logger = logging.getLogger(__name__)

RULES = {
    "name": ("fact", "fact", "core"), "role": ("fact", "fact", "core"), "employer": ("fact", "fact", "high"),
    "location": ("fact", "fact", "high"), "languages": ("fact", "fact", "normal"),
    "preference": ("preference", "preference", "high"), "dislike": ("preference", "preference", "high"),
    "style": ("style", "style", "high"), "decision": ("decision", "fact", "high"),
    "standard": ("standard", "fact", "high"), "gotcha": ("gotcha", "fact", "normal"),
    "solution": ("solution", "fact", "high"),
}
# How many tool lines one exchange shows the model: a long agent run is summarised, not replayed.
TOOL_LINES = 12
SYSTEM_PROMPT = (
    "You read a conversation between a USER and an ASSISTANT and list what is worth remembering "
    "long-term. Keep only what the USER states as true now about themselves or their project: their "
    "name, role, employer, where they live, languages they speak, preferences and dislikes, how they "
    "want answers (style), and their team's decisions, standards (always/never rules) and gotchas "
    "(pitfalls they warn about). Never: anything the assistant says, questions, hypotheticals, plans "
    "or wishes, the past ('I used to'), other people's facts, jokes or sarcasm, anything ephemeral "
    "(today's mood, this task). A solution is a problem that was fixed: the error (often in a TOOL "
    "ERROR line), the fix (the assistant's edit or words) and the proof it worked (a later TOOL PASSED "
    "line of the same kind of run, or the user saying so); a failure nothing fixed is no solution; "
    "its evidence may be copied from a TOOL line's output. "
    "Answer with one JSON object and nothing else: "
    '{"memories": [{"rule": one of ' + ", ".join(RULES) + ', "content": a short third-person '
    'sentence ("The user lives in Lisbon."), "value": the fact in a few words, "evidence": the '
    'user\'s exact words it comes from, copied verbatim, "exchange": the exchange number, '
    '"confidence": 0 to 1}]}. An empty list is a good answer when nothing qualifies.'
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass
class ModelOutcome:
    candidates: list[extract.Candidate]
    attempts: int
    # Why the model's answer was not used (the rules' memories stand alone), or "".
    failed: str = ""


def _config() -> dict[str, Any]:
    return dict(settings.SAM_EXTRACTOR)


def enabled() -> bool:
    return _config()["PROVIDER"] == "openai"


def transcript(exchanges: list[Exchange], *, profile: str = "", start: int = 0) -> str:
    lines = [f"USER PROFILE (custom instructions): {profile}"] if profile and start == 0 else []
    for exchange in exchanges:
        if exchange.index < start:
            continue
        lines.append(f"[exchange {exchange.index}] USER: {exchange.user}")
        if exchange.assistant:
            lines.append(f"[exchange {exchange.index}] ASSISTANT: {exchange.assistant[:1500]}")
        lines += [f"[exchange {exchange.index}] {line}" for line in tool_lines(exchange)[:TOOL_LINES]]
    return "\n".join(lines)


def tool_lines(exchange: Exchange) -> list[str]:
    """The tool traffic of an exchange in a few lines: failing runs with their telling line,
    passing runs with theirs, the files edited."""
    calls = {step.call.id: step.call for step in exchange.steps if step.call is not None}
    lines: list[str] = []
    edited: list[str] = []
    for step in exchange.steps:
        call = calls.get(step.result.call_id) if step.result is not None else None
        if call is None or step.result is None:
            continue
        edited += [change.file for change in tools.changes(call) if change.file not in edited]
        command = tools.command(call)
        if not command:
            continue
        if tools.failed(step.result):
            lines.append(f"TOOL ERROR (`{command[:120]}`): {tools.signature(step.result.text)}")
        elif tools.command_kinds(command):
            lines.append(f"TOOL PASSED (`{command[:120]}`): {tools.passing_line(step.result)}")
    if edited:
        lines.append(f"EDITED: {', '.join(edited[:10])}")
    return lines


def repair(text: str) -> Any:
    """The JSON object in a model's answer, mended where models usually break it; raises ValueError."""
    match = _OBJECT.search(text or "")
    if match is None:
        raise ValueError("no JSON object in the answer")
    return json.loads(_TRAILING_COMMA.sub(r"\1", match.group(0)))


def extract_with_model(exchanges: list[Exchange], *, profile: str = "", start: int = 0,
                       transport: httpx.BaseTransport | None = None) -> ModelOutcome:
    config = _config()
    attempts, failed = 0, ""
    payload = {
        "model": config["MODEL"], "temperature": 0,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": transcript(exchanges, profile=profile, start=start)}],
    }
    headers = {"Authorization": f"Bearer {config['API_KEY']}"} if config["API_KEY"] else {}
    with httpx.Client(base_url=str(config["URL"]).rstrip("/"), headers=headers,
                      timeout=float(config["TIMEOUT_SECONDS"]), transport=transport) as client:
        while attempts < int(config["MAX_ATTEMPTS"]):
            attempts += 1
            try:
                response = client.post("/chat/completions", json=payload)
                if response.status_code != 200:
                    raise ValueError(f"HTTP {response.status_code}")
                data = repair(response.json()["choices"][0]["message"]["content"])
                return ModelOutcome(_candidates(data, exchanges, profile=profile, start=start), attempts)
            except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
                failed = type(exc).__name__ if isinstance(exc, httpx.HTTPError) else str(exc)[:200]
                logger.warning("model extractor attempt %d failed: %s", attempts, failed)
                time.sleep(min(2.0, 0.2 * 2 ** attempts))
    return ModelOutcome([], attempts, failed=failed or "no attempt made")


def _candidates(data: Any, exchanges: list[Exchange], *, profile: str, start: int) -> list[extract.Candidate]:
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise ValueError("the answer has no `memories` list")
    said = {e.index: e.user for e in exchanges if e.index >= start}
    # A solution may quote a tool's result: where the error and the passing line are.
    results = {e.index: [(s.result.text, s.turn) for s in e.steps if s.result is not None]
               for e in exchanges if e.index >= start}
    turns = {e.index: e.turns[0] if e.turns else "" for e in exchanges}
    minimum = float(_config()["MIN_CONFIDENCE"])
    found = []
    for item in data["memories"]:
        if not isinstance(item, dict) or item.get("rule") not in RULES:
            continue
        evidence = str(item.get("evidence") or "").strip()
        content = " ".join(str(item.get("content") or "").split())[:500]
        try:
            exchange, confidence = int(item.get("exchange", -1)), float(item.get("confidence", 0))
        except (TypeError, ValueError):
            continue
        source = said.get(exchange, "") or (profile if start == 0 else "")
        turn = turns.get(exchange, "")
        if item["rule"] == "solution" and evidence.lower() not in source.lower():
            source, turn = next(((text, at) for text, at in results.get(exchange, [])
                                 if evidence and evidence.lower() in text.lower()), ("", ""))
        # Only the user's own words (or a tool's output), quoted exactly: what the model cannot
        # point at, it made up.
        if not evidence or not content or evidence.lower() not in source.lower() or confidence < minimum:
            continue
        kind, category, priority = RULES[item["rule"]]
        found.append(extract.Candidate(
            kind=kind, category=category, priority=priority, confidence=round(min(confidence, 0.85), 2),
            title=f"{rules.TITLES.get(item['rule'], 'A memory')}", content=content,
            evidence=evidence[:300], exchange=max(exchange, 0), rule=f"{RULE_PREFIX}{item['rule']}",
            value=str(item.get("value") or "")[:200], turn=turn))
    return found


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def merge(rules: list[extract.Candidate], model: list[extract.Candidate]) -> list[extract.Candidate]:
    """The rules' memories, then the model's that say something else (seed 003's merge). A
    solution the rules already found in the same exchange is the same solution, however the
    model words it."""
    kept = list(rules)
    for candidate in model:
        words = _words(candidate.content)
        if any(len(words & _words(k.content)) / max(1, len(words | _words(k.content))) > 0.5 for k in kept):
            continue
        if candidate.kind == "solution" and any(k.kind == "solution" and k.exchange == candidate.exchange
                                                for k in kept):
            continue
        kept.append(candidate)
    return kept
