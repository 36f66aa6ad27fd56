"""How a memory's confidence fades when nothing reinforces it (pure; docs/lifecycle.md).

Two forgettings multiply, per day:

- the memory type's rate (seed 001): episodic 0.98, semantic 0.995, procedural 0.999;
- the memory's own `decay_policy` (seed 000): exponential with `half_life_days`, a daily
  factor of 0.5 ** (1 / half_life_days); a policy of type `none` stops decay altogether.

What a day takes (1 − factor) is then slowed down by what says the memory matters (seed 002):

- importance: × (1 − 0.5 × importance), so an importance of 1 halves the loss;
- usefulness: ÷ (1 + ln(1 + usage_count)), each answer it helped with counts;
- a recent access (within 7 days of the pass): × 0.5;
- reliability `confirmed`: × 0.5 (a person or a check said it holds).

A memory of priority `core` is pinned: it never decays. Decay is a function of elapsed time,
so applying it for d₁ days then d₂ days gives what applying it for d₁ + d₂ does: running the
job twice, or late, neither doubles nor skips a day. Confidence never rises here; only
reinforcement (confirm, use) raises it.

The nightly pass computes the same formula in SQL (memories.lifecycle.maintenance); a test holds the
two to agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

TYPE_DAILY_RATE = {"episodic": 0.98, "semantic": 0.995, "procedural": 0.999}
DEFAULT_TYPE_RATE = TYPE_DAILY_RATE["semantic"]
DEFAULT_HALF_LIFE_DAYS = 90.0
IMPORTANCE_SLOWDOWN = 0.5
RECENT_ACCESS_DAYS = 7.0
RECENT_ACCESS_FACTOR = 0.5
CONFIRMED_FACTOR = 0.5
PINNED_PRIORITY = "core"
# Below this, a memory may be pruned, in spaces whose policy opts in (seed 001).
PRUNE_FLOOR = 0.1
DEFAULT_MIN_CONFIDENCE = 0.4
DAY = 86400.0  # seconds


@dataclass(frozen=True)
class DecayInputs:
    """What decides how fast one memory fades."""

    memory_type: str = "semantic"
    decay_policy: Mapping[str, Any] | None = None
    importance: float = 0.5
    usage_count: int = 0
    accessed_recently: bool = False
    reliability: str = "unverified"
    priority: str = "normal"


def policy_factor(policy: Mapping[str, Any] | None) -> float | None:
    """The policy's daily factor; None when the policy stops decay (`type: none`)."""
    policy = policy or {}
    if policy.get("type", "exponential") != "exponential":
        return None
    half_life = float(policy.get("half_life_days") or DEFAULT_HALF_LIFE_DAYS)
    return 0.5 ** (1.0 / half_life)


def daily_loss(inputs: DecayInputs) -> float:
    """The share of confidence one day takes from this memory (0 when it does not decay)."""
    if inputs.priority == PINNED_PRIORITY:
        return 0.0
    own = policy_factor(inputs.decay_policy)
    if own is None:
        return 0.0
    factor = TYPE_DAILY_RATE.get(inputs.memory_type, DEFAULT_TYPE_RATE) * own
    loss = (1.0 - factor) * (1.0 - IMPORTANCE_SLOWDOWN * min(max(inputs.importance, 0.0), 1.0))
    loss /= 1.0 + math.log1p(max(inputs.usage_count, 0))
    if inputs.accessed_recently:
        loss *= RECENT_ACCESS_FACTOR
    if inputs.reliability == "confirmed":
        loss *= CONFIRMED_FACTOR
    return loss


def decayed(confidence: float, days: float, inputs: DecayInputs) -> float:
    """`confidence` after `days` without reinforcement (never more than it was)."""
    if days <= 0:
        return confidence
    return max(0.0, confidence * (1.0 - daily_loss(inputs)) ** days)


def min_confidence(policy: Mapping[str, Any] | None) -> float:
    """Below this a memory is suggested for archiving (its policy's, or 0.4)."""
    value = (policy or {}).get("min_confidence")
    return float(value) if isinstance(value, (int, float)) else DEFAULT_MIN_CONFIDENCE


def current(confidence: float, *, since: datetime, now: datetime, memory_type: str,
            decay_policy: Mapping[str, Any] | None, importance: float, usage_count: int,
            last_accessed_at: datetime | None, reliability: str, priority: str) -> float:
    """A stored confidence brought up to `now` from `since` (its last decay pass, or the
    memory's last update before the first): what the next nightly pass will store. Recall's
    scoring and feedback read a memory's confidence through this."""
    recent = (last_accessed_at is not None
              and (now - last_accessed_at).total_seconds() <= RECENT_ACCESS_DAYS * DAY)
    inputs = DecayInputs(memory_type=memory_type, decay_policy=decay_policy or {},
                         importance=float(importance), usage_count=int(usage_count or 0),
                         accessed_recently=recent, reliability=reliability, priority=priority)
    return decayed(float(confidence), max(0.0, (now - since).total_seconds() / DAY), inputs)
