"""A realistic, valid PRD event log of any length (deterministic), for the PRD benchmarks.

Each requirement goes through about ten events: started, a decision, a failing test, a
revision, a passing test, sometimes a blocker and its resolution, review feedback, the
completion and sometimes a handoff. Summaries are a sentence or two, as agents write them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

TOPICS = ["cart totals", "payment retries", "receipt PDFs", "tax tables", "session storage",
          "webhook signatures", "refund flow", "address lookup", "coupon rules", "order emails"]


def events(count: int, *, seed: int = 7) -> Iterator[dict]:
    """`count` event bodies for POST /api/v1/prd/executions/{id}/events/ (decisions inline)."""
    rng = random.Random(seed)
    made = 0
    number = 0
    while True:
        number += 1
        requirement, topic = f"R{number}", TOPICS[number % len(TOPICS)]
        steps = [
            ("requirement_started", f"Started {topic}; reading the existing module first.", {}),
            ("decision_made", f"Keep {topic} in its own service module",
             {"reason": f"{topic} changes often and is tested alone", "alternatives": ["inline in views"]}),
            ("test_failed", f"test_{topic.replace(' ', '_')} fails: expected 2 rows, got 3",
             {"test": f"tests/test_{number}.py"}),
            ("revision", f"Deduplicated the {topic} query with DISTINCT ON", {}),
            ("test_passed", f"All {topic} tests pass ({rng.randint(4, 30)} tests)", {}),
        ]
        if rng.random() < 0.4:
            steps += [("blocker_hit", f"The staging API for {topic} answers 503", {}),
                      ("blocker_resolved", "Switched to the recorded fixtures until staging is back", {})]
        steps += [("review_feedback", f"Name the {topic} settings after the domain, not the vendor", {}),
                  ("requirement_completed", f"{topic.capitalize()} done: {rng.randint(2, 9)} files changed",
                   {"files_changed": rng.randint(2, 9)})]
        if rng.random() < 0.3:
            steps.append(("agent_handoff", f"Handing over after {topic}; next is the following requirement",
                          {}))
        for type_, summary, detail in steps:
            yield {"type": type_, "requirement_id": requirement, "summary": summary, "detail": detail,
                   "agent_id": f"agent-{number % 3}"}
            made += 1
            if made == count:
                return


def closing(bodies: list[dict]) -> list[dict]:
    """Events that finish what `bodies` left open, so the execution may complete."""
    open_blockers: dict[str, int] = {}
    started: set[str] = set()
    for body in bodies:
        requirement = body["requirement_id"]
        if body["type"] == "requirement_started":
            started.add(requirement)
        elif body["type"] == "requirement_completed":
            started.discard(requirement)
        elif body["type"] == "blocker_hit":
            open_blockers[requirement] = open_blockers.get(requirement, 0) + 1
        elif body["type"] == "blocker_resolved":
            open_blockers[requirement] -= 1
    tail = [{"type": "blocker_resolved", "requirement_id": r, "summary": "Resolved at the end", "detail": {}}
            for r, n in open_blockers.items() for _ in range(n)]
    tail += [{"type": "requirement_completed", "requirement_id": r, "summary": "Finished", "detail": {}}
             for r in sorted(started)]
    return tail
