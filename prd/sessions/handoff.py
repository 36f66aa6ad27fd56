"""A session's handoff, compiled from its events (pure; docs/sessions.md, "Handoffs").

What changed, what shipped, what failed, the decisions, open questions and next steps, each
entry citing the events it rests on (their client ids). The same events always give the same
handoff, JSON and Markdown: nothing here reads the clock (`generated_at` is the newest
event's time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governance.defuse import LEGEND
from prd.sessions.rules import (
    FAILING_TESTS,
    Event,
    clip,
    command_failed,
    command_succeeded,
    first_line,
    shipped,
    test_status,
)

LIST_MAX = 25
TEXT_MAX = 300


def _iso(event: Event) -> str:
    return event.ts.isoformat().replace("+00:00", "Z")


def _cite(*events: Event) -> list[str]:
    return [e.event_id for e in events]


def _changed(events: Sequence[Event]) -> list[dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.event_type != "file_change" or not event.path:
            continue
        entry = files.setdefault(event.path, {"path": event.path, "changes": 0, "events": []})
        entry["change"] = str(event.data.get("change") or "modified")
        entry["changes"] += 1
        entry["events"].append(event.event_id)
    return sorted(files.values(), key=lambda f: (-f["changes"], f["path"]))[:LIST_MAX]


def _failed(events: Sequence[Event]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(what is still failing, what failed and was fixed): by test name and by command, the
    last outcome decides."""
    last: dict[tuple[str, str], Event] = {}
    first_failure: dict[tuple[str, str], Event] = {}
    for event in events:
        if event.event_type == "test_result" and test_status(event) in (*FAILING_TESTS, "passed"):
            key = ("test", event.test_name)
        elif event.event_type == "command_run" and event.exit_code is not None and event.command:
            key = ("command", event.command)
        else:
            continue
        last[key] = event
        if test_status(event) in FAILING_TESTS or command_failed(event):
            first_failure.setdefault(key, event)
    failing, fixed = [], []
    for key, event in last.items():
        failure = first_failure.get(key)
        if failure is None:
            continue
        kind, subject = key
        entry = {
            "kind": kind,
            "subject": subject,
            "events": _cite(failure, event) if failure is not event else _cite(event),
        }
        if test_status(event) in FAILING_TESTS or command_failed(event):
            entry["error"] = clip(first_line(event.text), TEXT_MAX)
            failing.append(entry)
        else:
            fixed.append(entry)
    return failing[:LIST_MAX], fixed[:LIST_MAX]


def _strings(event: Event, key: str) -> list[str]:
    values = event.data.get(key, [])
    return (
        [clip(v, TEXT_MAX) for v in values if isinstance(v, str) and v.strip()]
        if isinstance(values, list)
        else []
    )


def compile_handoff(session: dict[str, Any], events: Sequence[Event]) -> dict[str, Any]:
    """The handoff of one session (`session`: id, space, agent_id, title) from its events in
    sequence order."""
    failing, fixed = _failed(events)
    shipped_entries = [
        {"what": clip(e.command if e.event_type == "command_run" else e.text, TEXT_MAX), "events": _cite(e)}
        for e in events
        if shipped(e)
    ]
    shipped_entries += [
        {"what": f"{f['kind']} `{f['subject']}` passes again", "events": f["events"]} for f in fixed
    ]
    decisions = [
        {
            "decision": clip(str(e.data.get("decision") or e.text), TEXT_MAX),
            "reason": clip(str(e.data.get("reason") or ""), TEXT_MAX),
            "events": _cite(e),
        }
        for e in events
        if e.event_type == "decision"
    ]
    questions: dict[str, list[str]] = {}
    steps: dict[str, list[str]] = {}
    for event in events:
        for question in _strings(event, "open_questions"):
            questions.setdefault(question, []).append(event.event_id)
        for step in _strings(event, "next_steps"):
            steps.setdefault(step, []).append(event.event_id)
    next_steps = [{"step": s, "events": ids} for s, ids in steps.items()]
    # Nothing said what comes next: whatever still fails is the next thing to do.
    if not next_steps:
        next_steps = [
            {"step": f"Fix the failing {f['kind']} `{f['subject']}`", "events": f["events"]} for f in failing
        ]
    summaries = [e for e in events if e.event_type in ("summary", "handoff") and e.text.strip()]
    counts: dict[str, int] = {}
    for event in events:
        counts[event.event_type] = counts.get(event.event_type, 0) + 1
    return {
        "session": session,
        "generated_at": _iso(events[-1]) if events else None,
        "events": len(events),
        "event_types": dict(sorted(counts.items())),
        "started_at": _iso(events[0]) if events else None,
        "summary": {"text": clip(summaries[-1].text, 1000), "events": _cite(summaries[-1])}
        if summaries
        else None,
        "what_changed": _changed(events),
        "what_shipped": shipped_entries[:LIST_MAX],
        "what_failed": failing,
        "decisions": decisions[-LIST_MAX:],
        "open_questions": [{"question": q, "events": ids} for q, ids in questions.items()][:LIST_MAX],
        "next_steps": next_steps[:LIST_MAX],
        "commands_succeeded": sum(1 for e in events if command_succeeded(e)),
        "commands_failed": sum(1 for e in events if command_failed(e)),
    }


def _refs(ids: list[str]) -> str:
    return " [" + ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "") + "]" if ids else ""


def render_markdown(handoff: dict[str, Any]) -> str:
    session = handoff["session"]
    lines = [
        f"# Handoff: session {session['id']}" + (f" ({session['title']})" if session.get("title") else ""),
        "",
        f"*space {session['space']} · {handoff['events']} events · "
        f"{handoff['started_at'] or 'n/a'} to {handoff['generated_at'] or 'n/a'}*",
        "",
    ]
    if handoff.get("defused"):
        lines += [LEGEND, ""]
    if handoff["summary"]:
        lines += [handoff["summary"]["text"] + _refs(handoff["summary"]["events"]), ""]
    sections = [
        (
            "What changed",
            [
                f"- `{f['path']}` {f['change']} ({f['changes']}×)" + _refs(f["events"])
                for f in handoff["what_changed"]
            ],
        ),
        ("What shipped", [f"- {s['what']}" + _refs(s["events"]) for s in handoff["what_shipped"]]),
        (
            "What failed",
            [
                f"- {f['kind']} `{f['subject']}`"
                + (f": {f['error']}" if f.get("error") else "")
                + _refs(f["events"])
                for f in handoff["what_failed"]
            ],
        ),
        (
            "Decisions",
            [
                f"- {d['decision']}"
                + (f" (because {d['reason']})" if d["reason"] else "")
                + _refs(d["events"])
                for d in handoff["decisions"]
            ],
        ),
        ("Open questions", [f"- {q['question']}" + _refs(q["events"]) for q in handoff["open_questions"]]),
        ("Next steps", [f"- {s['step']}" + _refs(s["events"]) for s in handoff["next_steps"]]),
    ]
    for heading, entries in sections:
        lines += [f"## {heading}", *(entries or ["- none"]), ""]
    return "\n".join(lines).rstrip() + "\n"
