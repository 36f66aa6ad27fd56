"""Memory modes: what SAM may capture and recall, per space and per user (docs/security.md,
"Memory modes").

Each mode is a policy of three answers: what happens to a write, whether recall answers,
and whether a recall may leave traces (access counters, recall events, audit rows).
When a space and a user both have a mode, each answer takes the stricter of the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from core.choices import Mode, Retention


class WriteOutcome(IntEnum):
    """Ordered from most to least permissive, so the stricter of two is the max."""

    STORE = 0
    DISCARD = 1   # accepted and answered, nothing kept
    REFUSE = 2    # rejected with 409


@dataclass(frozen=True)
class Policy:
    write: WriteOutcome
    recall: bool
    track: bool

    def stricter(self, other: Policy) -> Policy:
        return Policy(write=max(self.write, other.write), recall=self.recall and other.recall,
                      track=self.track and other.track)


POLICIES: dict[str, Policy] = {
    Mode.ASSIST: Policy(WriteOutcome.STORE, recall=True, track=True),
    Mode.CAPTURE_ONLY: Policy(WriteOutcome.STORE, recall=False, track=False),
    Mode.PAUSED: Policy(WriteOutcome.REFUSE, recall=True, track=False),
    Mode.INCOGNITO: Policy(WriteOutcome.DISCARD, recall=True, track=False),
    Mode.OFF: Policy(WriteOutcome.REFUSE, recall=False, track=False),
}


def policy_for(*modes: str) -> Policy:
    """The combined policy of several modes (a space's and a user's)."""
    result = POLICIES[Mode.ASSIST]
    for mode in modes:
        result = result.stricter(POLICIES[mode])
    return result


__all__ = ["Mode", "Policy", "Retention", "WriteOutcome", "policy_for"]
