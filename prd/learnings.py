"""Learnings of an execution: a problem and what fixed it (pure; no database).

The append service links each fix to its problem when the fix is logged
(`PRDEvent.resolves`): a blocker_resolved to the blocker it closes, a test_passed or
requirement_completed to the first failure of the streak it ends. A learning is such a
pair, "when X failed, Y fixed it" (docs/prd.md, "Events and progress").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prd.models import PRDEvent

BLOCKER_RESOLVED = "blocker_resolved"
FAILURE_FIXED = "failure_fixed"


def plain(text: str) -> str:
    """A summary as a clause: single-spaced, without its closing full stop."""
    return " ".join(text.split()).rstrip(" .;:")


# Words that open a summary but read lowercase inside a sentence ("When the build hangs...").
# Other capitals (names, acronyms: Stripe, CI) stay as written.
_LEADING_WORDS = frozenset({"a", "an", "the", "our", "my", "this", "that", "these", "those", "its", "their",
                            "some", "no", "every", "all", "we", "it", "they"})


def clause(text: str) -> str:
    """A summary inside a sentence: `plain`, with a leading article or pronoun lowered."""
    text = plain(text)
    first, _, rest = text.partition(" ")
    if first.lower() in _LEADING_WORDS and first[:1].isupper():
        return f"{first.lower()} {rest}".strip()
    return text


def requirement_phrase(requirement_id: str) -> str:
    return f"requirement {requirement_id}" if requirement_id else "the execution"


@dataclass(frozen=True)
class Learning:
    kind: str
    problem: PRDEvent
    fix: PRDEvent
    # Revisions and rollbacks logged between problem and fix on the same requirement.
    steps: tuple[PRDEvent, ...] = ()

    @property
    def requirement_id(self) -> str:
        return self.problem.requirement_id or self.fix.requirement_id

    @property
    def problem_label(self) -> str:
        return "blocker" if self.kind == BLOCKER_RESOLVED else self.problem.type.replace("_", " ")

    def short(self) -> str:
        """One line for a digest."""
        where = f"{self.requirement_id}: " if self.requirement_id else ""
        return f"{where}{plain(self.problem.summary)} -> {plain(self.fix.summary)}"

    def sentence(self) -> str:
        """The procedural memory's wording."""
        verb = "resolved" if self.kind == BLOCKER_RESOLVED else "fixed"
        text = (f"When {clause(self.problem.summary)} ({self.problem_label} on "
                f"{requirement_phrase(self.requirement_id)}), this {verb} it: {plain(self.fix.summary)}.")
        if self.steps:
            text += " On the way: " + "; ".join(
                f"{s.type.replace('_', ' ')}: {plain(s.summary)}" for s in self.steps
            ) + "."
        return text


def learning_of(event: PRDEvent, *, steps: Sequence[PRDEvent] = (),
                problem: PRDEvent | None = None) -> Learning | None:
    """The learning `event` completes, if it is a fix. Pass the `problem` it resolves when
    you have it; otherwise `event.resolves` is read (load it with the event)."""
    if not event.resolves_id:
        return None
    problem = problem or event.resolves
    assert problem is not None  # resolves_id is set
    kind = BLOCKER_RESOLVED if event.type == BLOCKER_RESOLVED else FAILURE_FIXED
    return Learning(kind=kind, problem=problem, fix=event, steps=tuple(steps))


def learnings_of(events: Iterable[PRDEvent]) -> list[Learning]:
    return [learning for event in events if (learning := learning_of(event)) is not None]
