"""Solutions proven by tools: a run that failed, the edits after it, and a later run of the
same kind that passed (seed 002: a problem, its fix, the proof it worked).

In a coding agent's session the user rarely says "that worked": the error is in a tool's
result, the fix is the assistant's Edit, the proof is the next green run. So a solution here
is:

- a failing run: a command whose result is an error, or whose output says it failed
  (a traceback, `FAILED`, `error[E…]`, `npm ERR!`, a non-zero exit, a compile error);
- the edits made after it (the files and each change, old -> new, bounded);
- a later run of the same kind of command (`pytest …`, `go test …`, `npm test`) that passes.

A failure no passing run follows is not a solution, nor is a run that passes with no edit in
between (the fix, if any, was not the assistant's), and the user saying it still fails right
after cancels it. The memory holds the error's telling line, the fix (the assistant's own
closing summary when there is one, else its words before the edit), the changes, and the
passing line as evidence, with the id of the turn it was quoted from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memories.capture import extract, tools
from memories.capture.exchanges import Exchange

_STILL_FAILS = re.compile(r"\b(?:still (?:fails|failing|broken|red|erroring|crashing|the same|getting|"
                          r"doesn'?t work|not working|seeing)|didn'?t (?:work|help|fix)|doesn'?t work|"
                          r"same (?:error|failure|problem)|no luck|not working|not fixed|fails again)\b",
                          re.IGNORECASE)
# How much of the fix a memory shows: enough to recognise it.
SHOWN_CHANGES = 3
SHOWN_CHARS = 160
SUMMARY_CHARS = 500


@dataclass
class _Failure:
    command: str
    signature: str
    changes: list[tools.Change] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)  # commands that changed the project (installs, migrations)
    said: str = ""  # the assistant's words next to its first edit


@dataclass
class _Fixed:
    failure: _Failure
    command: str
    line: str
    turn: str
    exchange: int
    summary: str = ""


def solutions(exchanges: list[Exchange], *, start: int = 0) -> list[extract.Candidate]:
    """The solutions tool traffic proves, from exchange `start` on (earlier ones were read)."""
    failures: dict[str, _Failure] = {}  # open ones, by kind of command: a fix may come later
    fixed: list[_Fixed] = []
    for exchange in exchanges:
        # The user's next words after a fix may say it did not hold.
        if fixed and fixed[-1].exchange == exchange.index - 1 and _STILL_FAILS.search(exchange.user):
            fixed.pop()
        fixed += _fixed_in(exchange, failures)
    return [_candidate(f) for f in fixed if f.exchange >= start]


def _fixed_in(exchange: Exchange, failures: dict[str, _Failure]) -> list[_Fixed]:
    """Walk one exchange's steps in order: `failures` (by kind of run) is updated in place."""
    calls = {step.call.id: step.call for step in exchange.steps if step.call is not None}
    found: list[_Fixed] = []
    said = ""  # the assistant's latest words since the last failure
    for step in exchange.steps:
        if step.kind == "text":
            said = step.text
            if found:  # the assistant's last words after the passing run: its closing summary
                found[-1].summary = step.text
            continue
        call = calls.get(step.result.call_id) if step.result is not None else None
        if call is None or step.result is None:
            continue
        if tools.changes(call):
            if not step.result.is_error:
                _add_fix(failures, said, changes=tools.changes(call))
            continue
        command = tools.command(call)
        kinds = tools.command_kinds(command) if command else []
        if tools.failed(step.result):
            failure = _Failure(command=command, signature=tools.signature(step.result.text))
            for kind in kinds:
                failures.setdefault(kind, failure)
            said = ""
            continue
        if tools.fixing(command):
            _add_fix(failures, said, ran=command)
        line = tools.passing_line(step.result)
        for kind in kinds:
            closed = failures.get(kind)
            if closed is None:
                continue
            # One failure may stand under several kinds (`cargo build && cargo test`): all close.
            for other in [k for k, f in failures.items() if f is closed]:
                del failures[other]
            if (closed.changes or closed.ran) and line:
                found.append(_Fixed(closed, command, line, step.turn, exchange.index))
    return found


def _add_fix(failures: dict[str, _Failure], said: str, *, changes: list[tools.Change] | None = None,
             ran: str = "") -> None:
    for failure in failures.values():
        failure.said = failure.said or said
        failure.changes += changes or []
        if ran and ran not in failure.ran:
            failure.ran.append(ran)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _summary(text: str) -> str:
    """The closing summary without the offer that often ends it ("Want the same for …?")."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s and not s.rstrip().endswith("?")]
    return _one_line(" ".join(sentences), SUMMARY_CHARS)


def _candidate(fixed: _Fixed) -> extract.Candidate:
    failure = fixed.failure
    files = list(dict.fromkeys(change.file for change in failure.changes))
    changed = f"changed {', '.join(files)}" if files else ""
    fix = _summary(fixed.summary) or _summary(failure.said) or changed
    shown = [c for c in failure.changes if c.new or c.old][:SHOWN_CHANGES]
    lines = [f"Problem: {failure.signature} (`{_one_line(failure.command, 120)}`)", f"Fix: {fix}"]
    lines += [f"Changed {c.file}: `{_one_line(c.old, SHOWN_CHARS)}` -> `{_one_line(c.new, SHOWN_CHARS)}`"
              for c in shown]
    if len(files) > len({c.file for c in shown}):
        lines.append(f"Files: {', '.join(files[:10])}")
    lines += [f"Ran: `{_one_line(command, 160)}`" for command in failure.ran[:SHOWN_CHANGES]]
    lines.append(f"Proof: `{_one_line(fixed.command, 120)}`: {fixed.line}")
    return extract.Candidate(
        kind="solution", category="fact", priority="high", confidence=0.85,
        title=f"Fix for {failure.signature[:80]}", content="\n".join(lines), evidence=fixed.line,
        exchange=fixed.exchange, rule="tool_solution", code=[c.new for c in shown if c.new], turn=fixed.turn)
