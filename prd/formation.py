"""Which memories an execution's events and a chain form, and their wording (pure).

SAM's formation rules (docs/prd.md, "Memory formation"):

| source                                   | memory                         | kind       |
|------------------------------------------|--------------------------------|------------|
| requirement_completed                    | episodic                       | task_state |
| agent_handoff                            | episodic                       | task_state |
| decision (decision_made)                 | semantic                       | decision   |
| blocker_resolved (with its blocker)      | procedural "when X, Y fixed it"| solution   |
| failure fixed by test_passed/completion  | procedural "when X, Y fixed it"| solution   |
| failure never fixed (at completion)      | procedural                     | gotcha     |
| review_feedback                          | semantic                       | standard   |
| execution narrative (compaction)         | episodic                       | summary    |
| thinking chain summary                   | semantic                       | summary    |
| revision inside a thinking chain         | procedural                     | pattern    |

Each planned memory carries a unique `key`; prd.services writes the memory and its
FormedMemory link only when no link has that key yet, which makes formation safe to
run again. Texts are cut to the memory limits here, so no formed memory fails validation
for its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memories import limits as memory_limits
from memories.models import new_memory_id
from memories.normalize import clean_tags
from prd.learnings import Learning, plain, requirement_phrase
from prd.models import FormationRule
from prd.summarizers.extractive import clip

if TYPE_CHECKING:
    from prd.models import PRDDecision, PRDEvent, PRDExecution, ThinkingChain

EVENT_RULES = {
    "requirement_completed": FormationRule.REQUIREMENT_COMPLETED,
    "agent_handoff": FormationRule.AGENT_HANDOFF,
    "decision_made": FormationRule.DECISION,
    "blocker_resolved": FormationRule.BLOCKER_RESOLVED,
    "review_feedback": FormationRule.REVIEW_FEEDBACK,
}
# Event types that form a memory when logged (test_passed only when it fixes a failure).
FORMING_TYPES = frozenset({*EVENT_RULES, "test_passed"})


@dataclass
class Planned:
    """One memory to form: the memories-API item and where it came from."""

    key: str
    rule: str
    item: dict[str, Any]
    execution_id: str | None = None
    event_id: str | None = None
    decision_id: str | None = None
    chain_id: str | None = None
    memory_id: str = field(default_factory=new_memory_id)

    def __post_init__(self) -> None:
        self.item["id"] = self.memory_id


def memory_title(text: str) -> str:
    low, high = memory_limits.TITLE
    title = clip(text, high)
    return title if len(title) >= low else f"{title} (PRD)"


def memory_content(text: str) -> str:
    low, high = memory_limits.CONTENT
    content = text.strip()
    if len(content) > high:
        content = clip(content, high)
    return content if len(content) >= low else f"{content} (recorded by SAM)"


def memory_tags(*tags: str) -> list[str]:
    """Tags that pass the memory limits; an id too short or long for a tag is left out."""
    low, high = memory_limits.TAG
    return [t for t in clean_tags(tags) if low <= len(t) <= high][: memory_limits.TAGS_COUNT[1]]


def _prd_name(execution: PRDExecution) -> str:
    return f'PRD "{execution.title or execution.prd_ref}"'


def _item(execution: PRDExecution, *, title: str, content: str, memory_type: str, kind: str,
          tags: Sequence[str], occurred_at, metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "space": execution.space.slug,
        "title": memory_title(title),
        "content": memory_content(content),
        "memory_type": memory_type,
        "kind": kind,
        "tags": memory_tags("prd", *tags),
        "reliability": "inferred",
        "source": {"type": "derived", "ref": f"prd:{execution.id}", "uri": None},
        "occurred_at": occurred_at,
        "metadata": {"prd": {"execution": execution.id, "prd_ref": execution.prd_ref, **metadata}},
    }


def _event_meta(event: PRDEvent, rule: str) -> dict[str, Any]:
    return {"event": event.id, "sequence": event.sequence, "type": event.type,
            "requirement_id": event.requirement_id, "rule": rule}


def plan_event(execution: PRDExecution, event: PRDEvent, *,
               learning: Learning | None = None) -> list[Planned]:
    """Memories `event` forms. `event.decision` must be loaded for decision_made;
    `learning` is the pair the event completes, when it is a fix."""
    planned: list[Planned] = []
    name, requirement = _prd_name(execution), event.requirement_id
    rule = EVENT_RULES.get(event.type)
    if rule == FormationRule.REQUIREMENT_COMPLETED:
        planned.append(Planned(
            key=f"event:{event.id}:{rule}", rule=rule, execution_id=execution.id, event_id=event.id,
            item=_item(execution, title=f"Completed {requirement}: {plain(event.summary)}",
                       content=f"Completed {requirement_phrase(requirement)} of {name}: {event.summary}",
                       memory_type="episodic", kind="task_state", tags=[requirement],
                       occurred_at=event.created_at, metadata=_event_meta(event, rule)),
        ))
    elif rule == FormationRule.AGENT_HANDOFF:
        who = f"Agent {event.agent_id}" if event.agent_id else "An agent"
        planned.append(Planned(
            key=f"event:{event.id}:{rule}", rule=rule, execution_id=execution.id, event_id=event.id,
            item=_item(execution, title=f"Handoff: {plain(event.summary)}",
                       content=f"{who} handed off work on {requirement_phrase(requirement)} of {name}: "
                               f"{event.summary}",
                       memory_type="episodic", kind="task_state", tags=["handoff", requirement],
                       occurred_at=event.created_at, metadata=_event_meta(event, rule)),
        ))
    elif rule == FormationRule.DECISION:
        planned.append(plan_decision(execution, event.decision))
    elif rule == FormationRule.REVIEW_FEEDBACK:
        planned.append(Planned(
            key=f"event:{event.id}:{rule}", rule=rule, execution_id=execution.id, event_id=event.id,
            item=_item(execution, title=f"Review feedback: {plain(event.summary)}",
                       content=f"Review feedback on {requirement_phrase(requirement)} of {name}: "
                               f"{event.summary}",
                       memory_type="semantic", kind="standard", tags=["review", requirement],
                       occurred_at=event.created_at, metadata=_event_meta(event, rule)),
        ))
    if learning is not None:
        planned.append(plan_learning(execution, learning))
    return planned


def plan_decision(execution: PRDExecution, decision: PRDDecision) -> Planned:
    rule = FormationRule.DECISION
    lines = [f"Decision on {requirement_phrase(decision.requirement_id)} of {_prd_name(execution)}: "
             f"{decision.decision}"]
    if decision.reason:
        lines.append(f"Reason: {decision.reason}")
    if decision.alternatives:
        lines.append("Rejected alternatives: " + "; ".join(plain(a) for a in decision.alternatives))
    return Planned(
        key=f"decision:{decision.id}", rule=rule, execution_id=execution.id,
        event_id=decision.event_id, decision_id=decision.id,
        item=_item(execution, title=f"Decision: {plain(decision.decision)}", content="\n".join(lines),
                   memory_type="semantic", kind="decision", tags=["decision", decision.requirement_id],
                   occurred_at=decision.created_at,
                   metadata={"decision": decision.id, "event": decision.event_id,
                             "requirement_id": decision.requirement_id, "rule": rule}),
    )


def plan_learning(execution: PRDExecution, learning: Learning) -> Planned:
    rule = (FormationRule.BLOCKER_RESOLVED if learning.kind == "blocker_resolved"
            else FormationRule.FAILURE_FIXED)
    fix = learning.fix
    return Planned(
        key=f"event:{fix.id}:{rule}", rule=rule, execution_id=execution.id, event_id=fix.id,
        item=_item(execution, title=f"Fix for: {plain(learning.problem.summary)}",
                   content=f"{learning.sentence()}\n(From {_prd_name(execution)}.)",
                   memory_type="procedural", kind="solution",
                   tags=["learning", learning.requirement_id], occurred_at=fix.created_at,
                   metadata={**_event_meta(fix, rule), "problem_event": learning.problem.id}),
    )


def plan_unresolved_failure(execution: PRDExecution, failure: PRDEvent) -> Planned:
    rule = FormationRule.FAILURE_UNRESOLVED
    label = failure.type.replace("_", " ")
    return Planned(
        key=f"event:{failure.id}:{rule}", rule=rule, execution_id=execution.id, event_id=failure.id,
        item=_item(execution, title=f"Unresolved: {plain(failure.summary)}",
                   content=f"{plain(failure.summary)} ({label} on "
                           f"{requirement_phrase(failure.requirement_id)})"
                           f" was still failing when {_prd_name(execution)} was completed.",
                   memory_type="procedural", kind="gotcha", tags=["learning", failure.requirement_id],
                   occurred_at=failure.created_at, metadata=_event_meta(failure, rule)),
    )


def plan_execution_summary(execution: PRDExecution, text: str) -> Planned:
    rule = FormationRule.EXECUTION_SUMMARY
    return Planned(
        key=f"execution:{execution.id}:{rule}", rule=rule, execution_id=execution.id,
        item=_item(execution, title=f"PRD summary: {execution.title or execution.prd_ref}", content=text,
                   memory_type="episodic", kind="summary", tags=["summary"],
                   occurred_at=execution.completed_at, metadata={"rule": rule}),
    )


def _chain_item(chain: ThinkingChain, *, title: str, content: str, memory_type: str, kind: str,
                tags: Sequence[str], metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "space": chain.space.slug,
        "title": memory_title(title),
        "content": memory_content(content),
        "memory_type": memory_type,
        "kind": kind,
        "tags": memory_tags("reasoning", *tags),
        "reliability": "inferred",
        "source": {"type": "derived", "ref": f"chain:{chain.id}", "uri": None},
        "occurred_at": chain.completed_at,
        "metadata": {"thinking_chain": {"chain": chain.id, **metadata}},
    }


def plan_chain_summary(chain: ThinkingChain, text: str) -> Planned:
    rule = FormationRule.CHAIN_SUMMARY
    return Planned(
        key=f"chain:{chain.id}:{rule}", rule=rule, chain_id=chain.id,
        item=_chain_item(chain, title=f"Reasoning: {plain(chain.query)}", content=text,
                         memory_type="semantic", kind="summary", tags=["summary"],
                         metadata={"rule": rule}),
    )


def plan_chain_revision(chain: ThinkingChain, original: dict[str, Any], revision: dict[str, Any]) -> Planned:
    """A revision's procedural memory (docs/prd.md, "Thinking chains"): "When reasoning about
    <query>, the initial approach '<original>' needed revision because: <reason>".

    A SAM revision is one thought that says both what replaces the original and why, so
    its content is the reason, given once rather than repeated as "revision to '…' because: …".
    """
    rule = FormationRule.CHAIN_REVISION
    content = (f"When reasoning about {plain(chain.query)}, the initial approach "
               f"'{plain(original['content'])}' needed revision because: {plain(revision['content'])}.")
    return Planned(
        key=f"chain:{chain.id}:{rule}:{revision['number']}", rule=rule, chain_id=chain.id,
        item=_chain_item(chain, title=f"Revised reasoning: {plain(chain.query)}", content=content,
                         memory_type="procedural", kind="pattern", tags=["revision-pattern"],
                         metadata={"rule": rule, "thought": revision["number"],
                                   "revises": original["number"]}),
    )
