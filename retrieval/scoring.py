"""Signals, weight profiles, the composite score and the inclusion rule (pure functions).

Every signal is in [0, 1]:
- semantic: cosine similarity of query and memory embeddings, or of the query and the
  closest window of a long memory's content when that is closer (negative clipped to 0)
- lexical: IDF-weighted share of the query's lexemes the memory holds, by field (channels.lexical_signal)
- exact: canonical phrases found verbatim in the query or task, min(1, hits / min(n, 2))
- tags: share of the context's tags (filters, ui tags, tags named in the query) it carries
- recency: exp(-days since last used (else updated) / recency window)
- confidence: effective confidence, the stored one decayed up to now (memories.lifecycle.decay)
- importance: the memory's importance
- access: 1 / (1 + days since last accessed / 7), 0 if never accessed
- time: when the query names a time ("the Monday before July 24, 2023"), 1 for a memory said
  within it, .5 just outside, halved again for each window's length (a week at least) away;
  0 when the query names none
- graph: linked by an edge to one of the strongest hits: the edge's strength × how strong
  that hit is against the best one (memories.entities.graph); 0 when unlinked

The rules and a worked example: docs/recall.md, "Scoring".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

from memories.lifecycle import decay

SIGNALS = ("semantic", "lexical", "exact", "tags", "recency", "confidence", "importance", "access", "time",
           "graph")


@dataclass(frozen=True)
class Signals:
    semantic: float = 0.0
    lexical: float = 0.0
    exact: float = 0.0
    tags: float = 0.0
    recency: float = 0.0
    confidence: float = 0.0
    importance: float = 0.0
    access: float = 0.0
    time: float = 0.0
    graph: float = 0.0

    def as_dict(self, digits: int = 4) -> dict[str, float]:
        return {k: round(v, digits) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Thresholds:
    """When an item may be returned (docs/recall.md, "Scoring"), per profile and per request.

    An item is relevant when its semantic similarity reaches `similarity`, or its lexical
    score reaches `lexical`, or an exact phrase hit reaches `exact_exception`. A relevant
    item is returned when its composite score reaches `composite_min`, or it has an exact
    hit of at least `exact_exception`, or confidence of at least `confidence_exception`.
    """

    similarity: float = 0.75
    composite_min: float = 0.65
    exact_exception: float = 0.60
    confidence_exception: float = 0.90
    lexical: float = 1.01  # off unless a profile turns it on


@dataclass(frozen=True)
class Profile:
    name: str
    weights: dict[str, float]
    thresholds: Thresholds = field(default_factory=Thresholds)
    description: str = ""


PROFILES: dict[str, Profile] = {
    "seed000": Profile(
        "seed000",
        {"semantic": 0.50, "exact": 0.20, "recency": 0.15, "confidence": 0.15},
        Thresholds(),
        "SAM entry spec: semantic .50, exact .20, recency .15, confidence .15; thresholds .75/.65.",
    ),
    "seed001": Profile(
        "seed001",
        {"semantic": 0.70, "recency": 0.20, "access": 0.10},
        Thresholds(similarity=0.30, composite_min=0.0),
        "Agent memory spec: semantic .70, recency .20, access .10; min similarity .30.",
    ),
    "seed004": Profile(
        "seed004",
        {"semantic": 0.40, "lexical": 0.25, "recency": 0.20, "importance": 0.15},
        Thresholds(similarity=0.30, composite_min=0.0, lexical=0.10),
        "Memory studio spec: semantic .40, lexical .25, recency .20, importance .15.",
    ),
    # SAM's default, chosen on the development half of the recall benchmark
    # (docs/benchmarks.md): thresholds calibrated for all-MiniLM-L6-v2's similarity scale.
    "sam": Profile(
        "sam",
        {"semantic": 0.60, "lexical": 0.20, "exact": 0.10, "confidence": 0.05, "importance": 0.05,
         "time": 0.30, "graph": 0.10},
        Thresholds(similarity=0.20, composite_min=0.15, lexical=0.10),
        "SAM default: semantic .60, lexical .20, exact .10, confidence .05, importance .05; time .30 "
        "when the query names a time; graph .10 for what is linked to the strongest hits.",
    ),
}
DEFAULT_PROFILE = "sam"


def resolve_profile(name: str | None, *, weights: dict[str, float] | None = None,
                    thresholds: dict[str, float] | None = None) -> Profile:
    """A named profile with per-request overrides applied. Unknown names raise KeyError."""
    profile = PROFILES[name or DEFAULT_PROFILE]
    if weights:
        profile = replace(profile, weights={k: v for k, v in weights.items() if v},
                          name=f"{profile.name}+custom")
    if thresholds:
        profile = replace(profile, thresholds=replace(profile.thresholds, **thresholds))
    return profile


def composite(signals: Signals, weights: dict[str, float]) -> float:
    """Σ weight × signal (docs/recall.md, "Scoring": .50·.82 + .20·.10 + .15·.60 + .15·.85 = .6475)."""
    return sum(weight * getattr(signals, name) for name, weight in weights.items())


def is_relevant(signals: Signals, thresholds: Thresholds) -> bool:
    return (
        # Said in the time asked about and not unrelated to the question.
        (signals.time >= 1.0 and signals.semantic >= thresholds.similarity / 2)
        or signals.semantic >= thresholds.similarity
        or signals.lexical >= thresholds.lexical
        or signals.exact >= thresholds.exact_exception
    )


def passes(signals: Signals, score: float, thresholds: Thresholds) -> bool:
    """Score ≥ composite_min unless exact ≥ .60 or confidence ≥ .90 (docs/recall.md, "Scoring")."""
    if not is_relevant(signals, thresholds):
        return False
    return (
        score >= thresholds.composite_min
        or signals.exact >= thresholds.exact_exception
        or signals.confidence >= thresholds.confidence_exception
    )


def days_between(later: datetime, earlier: datetime | None) -> float | None:
    if earlier is None:
        return None
    return max(0.0, (later - earlier).total_seconds() / 86400)


def recency_signal(days: float | None, window_days: float) -> float:
    """exp(-days / window), the recency signal (docs/recall.md, "Scoring"); 0 when never used."""
    if days is None:
        return 0.0
    return math.exp(-days / window_days)


def access_signal(days: float | None) -> float:
    return 0.0 if days is None else 1.0 / (1.0 + days / 7.0)


def effective_confidence(row: dict, *, now: datetime) -> float:
    """The candidate's stored confidence brought up to `now` (memories.lifecycle.decay.current)."""
    return decay.current(
        row["confidence"], since=row.get("decayed_at") or row["updated_at"], now=now,
        memory_type=row["memory_type"], decay_policy=row["decay_policy"], importance=row["importance"],
        usage_count=row.get("usage_count") or 0, last_accessed_at=row.get("last_accessed_at"),
        reliability=row["reliability"], priority=row["priority"],
    )


def time_signal(said_at: datetime | None, start: datetime, end: datetime) -> float:
    """1 within [start, end); outside, .5 at its edge and halved again for every window's
    length away, a week at least (what happened "on 8 December" may be told days later)."""
    if said_at is None:
        return 0.0
    if start <= said_at < end:
        return 1.0
    span_days = max(7.0, (end - start).total_seconds() / 86400)
    away_days = (start - said_at if said_at < start else said_at - end).total_seconds() / 86400
    return 0.5 ** (1 + away_days / span_days)


def substance(lexemes: int, enough: int) -> float:
    """How much a memory says, in [0, 1]: its distinct words against `enough` of them (1 for
    a memory of `enough` words or more; 1 as well when `enough` is 0, the check off)."""
    if enough <= 0 or lexemes >= enough:
        return 1.0
    return max(0.0, lexemes) / enough


def exact_signal(hits: int, n_phrases: int) -> float:
    if hits <= 0 or n_phrases <= 0:
        return 0.0
    return min(1.0, hits / min(n_phrases, 2))
