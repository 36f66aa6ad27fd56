"""The facts a summariser works from, gathered from an execution's log or a chain (pure).

Both summarisers get the same digest, so the extractive narrative and a model's narrative
cover the same decisions, learnings and open ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prd import thoughts as chain_rules
from prd.learnings import learnings_of, plain
from prd.summarizers.base import Digest, Section

if TYPE_CHECKING:
    from prd.models import PRDDecision, PRDEvent, PRDExecution

LIST_MAX = 12


def _ids(values: Sequence[str]) -> str:
    shown = ", ".join(values[:LIST_MAX])
    return shown + (f" and {len(values) - LIST_MAX} more" if len(values) > LIST_MAX else "")


def _count(n: int, word: str) -> str:
    plural = word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{n} {word if n == 1 else plural}"


def _sentence(text: str) -> str:
    """`text` ended by a full stop, unless it ends with its own ("How to retry?")."""
    return text if text.endswith((".", "?", "!", "…")) else f"{text}."


def decision_line(decision: PRDDecision) -> str:
    where = f"{decision.requirement_id}: " if decision.requirement_id else ""
    line = f"{where}{plain(decision.decision)}"
    if decision.reason:
        line += f" (because {plain(decision.reason)})"
    return line


def execution_digest(execution: PRDExecution, *, events: Sequence[PRDEvent],
                     decisions: Sequence[PRDDecision]) -> Digest:
    """`events` in sequence order with `resolves` loaded; `decisions` in time order."""
    progress = execution.progress
    done, total = len(progress["completed"]), sum(len(v) for v in progress.values())
    by_type: dict[str, list[PRDEvent]] = {}
    for event in events:
        by_type.setdefault(event.type, []).append(event)
    open_blockers = len(execution.state.get("open_blockers", []))
    failures = len(by_type.get("test_failed", [])) + len(by_type.get("error_encountered", []))
    agents = sorted({e.agent_id for e in events if e.agent_id})
    name = execution.title or execution.prd_ref
    lead = (
        f'PRD "{name}" ({execution.prd_ref}): {done} of {_count(total, "requirement")} completed'
        + (f" ({_ids(progress['completed'])})" if done else "")
        + f"; {_count(len(events), 'event')}, {_count(len(decisions), 'decision')}, "
        f"{_count(len(by_type.get('blocker_hit', [])), 'blocker')} ({open_blockers} open), "
        f"{_count(failures, 'failure')}"
        + (f"; agents {', '.join(agents[:LIST_MAX])}" if agents else "")
        + "."
    )
    not_done = [f"{state.replace('_', ' ')}: {_ids(progress[state])}"
                for state in ("in_progress", "blocked", "not_started") if progress[state]]
    open_failures = {e for _, e in execution.state.get("open_failures", [])}
    not_done += [f"{e.requirement_id or 'execution'} still failing: {plain(e.summary)}"
                 for e in events if e.id in open_failures]
    sections = (
        Section("Decisions", tuple(decision_line(d) for d in decisions)),
        Section("Learnings", tuple(learning.short() for learning in learnings_of(events))),
        Section("Not done", tuple(not_done)),
        Section("Review feedback", tuple(_line(e) for e in by_type.get("review_feedback", []))),
        Section("Completed", tuple(_line(e) for e in by_type.get("requirement_completed", []))),
        Section("Handoffs", tuple(f"{e.agent_id or 'agent'}: {plain(e.summary)}"
                                  for e in by_type.get("agent_handoff", []))),
        Section("Rollbacks", tuple(_line(e) for e in by_type.get("rollback", []))),
    )
    return Digest(kind="execution", title=name, lead=lead, sections=sections)


def _line(event: PRDEvent) -> str:
    where = f"{event.requirement_id}: " if event.requirement_id else ""
    return f"{where}{plain(event.summary)}"


def chain_digest(*, query: str, thoughts: Sequence[dict[str, Any]]) -> Digest:
    """The question, the conclusion (the last thought no later one revises), revisions, branches."""
    revised = {t["revises"] for t in thoughts if t.get("is_revision")}
    standing = [t for t in thoughts if t["number"] not in revised]
    conclusion = standing[-1]["content"] if standing else ""
    pairs = chain_rules.revisions(list(thoughts))
    branches: dict[str, list[dict[str, Any]]] = {}
    for thought in thoughts:
        if thought.get("branch_id"):
            branches.setdefault(thought["branch_id"], []).append(thought)
    lead = (
        f"Question: {_sentence(plain(query))} {_count(len(thoughts), 'thought')}, "
        f"{_count(len(pairs), 'revision')}, {_count(len(branches), 'branch')}"
        + (f". Conclusion: {_sentence(plain(conclusion))}" if conclusion else ".")
    )
    sections = (
        Section("Revised", tuple(f"thought {o['number']} \"{plain(o['content'])}\" became "
                                 f"\"{plain(r['content'])}\"" for o, r in pairs)),
        Section("Reasoning", tuple(f"{t['number']}. {plain(t['content'])}" for t in standing[:-1])),
        Section("Branches", tuple(f"{b} (from thought {ts[0].get('branch_from')}): "
                                  f"{plain(ts[-1]['content'])}" for b, ts in branches.items())),
    )
    return Digest(kind="thinking_chain", title=plain(query), lead=lead, sections=sections)
