"""Micro-training: run a memory's training examples against recall (seed 000 §5,
docs/lifecycle.md, "Micro-training").

A memory's examples are its own `training_examples`, or SAM's suggestions
(memories.lifecycle.training) while it has none. An example passes when recall (SAM's default
profile, in the memory's space, as SAM itself, untracked) puts the memory in the top N for
the example's request, and the expected answer holds each assertion (contains the word;
"forbidden:word" does not). An example asserting `not recalled` passes when the memory is
not in the top N. Each run is kept (TrainingRun): the history of the pass rate.

A run is audited as a recall (docs/audit.md, "Which recalls are audited"): one untracked
`recall` row in the memory's space, targeting the run, with who asked and how many recalls
and items; the examples' text is on the memory, not in the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from core.actor import Actor
from core.jobs import enqueue
from governance import policy
from governance.access import SYSTEM
from governance.audit.services import audit_record
from memories.lifecycle import training
from memories.models import Memory
from retrieval import pipeline
from retrieval.context import RecallContext
from retrieval.models import TrainingRun

TOP_N = 5
# How many memories one nightly run tests at most (the ones changed since their last run first).
NIGHTLY_LIMIT = 500
# How many runs a memory's training panel shows, newest first.
RUNS_SHOWN = 20


@dataclass
class ExampleResult:
    id: str
    passed: bool
    rank: int | None
    reasons: list[str]
    returned: int = 0  # memories the recall returned (for the audit row's count)


def examples_of(memory: Memory) -> tuple[list[dict[str, Any]], bool]:
    """(examples, suggested): the memory's own, or SAM's suggestions when it has none."""
    own = list(memory.training_examples or [])
    if own:
        return own, False
    return training.suggest(
        title=memory.title, summary=memory.summary, canonical_phrases=list(memory.canonical_phrases or [])
    ), True


@dataclass
class TrainingPanel:
    """What a memory's training panel shows: its examples (its own, or SAM's suggestions
    while it has none) and its newest runs (RUNS_SHOWN, newest first)."""

    memory: str
    examples: list[dict[str, Any]]
    suggested: bool
    runs: list[TrainingRun]


def panel(memory: Memory) -> TrainingPanel:
    examples, suggested = examples_of(memory)
    return TrainingPanel(memory=memory.id, examples=examples, suggested=suggested,
                         runs=list(memory.training_runs.all()[:RUNS_SHOWN]))


# Seed 000 writes assertions as prose: "mentions X", "does not propose X". Other text is a
# word or phrase the expected answer must contain; "forbidden:X" one it must not.
MUST = re.compile(r"^(?:mentions|uses|includes|contains|recommends)\s+(.+)$")
MUST_NOT = re.compile(r"^(?:forbidden:|(?:does not|doesn't|never)\s+"
                      r"(?:(?:propose|mention|use|include|suggest|recommend)s?\s+)?)(.+)$")


def _assertions_hold(example: dict[str, Any]) -> list[str]:
    expected = str(example.get("assistant", "")).lower()
    reasons = []
    for assertion in example.get("assertions", []):
        text = " ".join(str(assertion).lower().split())
        if not text or text == training.NOT_RECALLED:
            continue
        forbidden = MUST_NOT.match(text)
        if forbidden:
            word = forbidden.group(1).strip()
            if word in expected:
                reasons.append(f"the expected answer contains the forbidden '{word}'")
            continue
        required = MUST.match(text)
        word = required.group(1).strip() if required else text
        if word not in expected:
            reasons.append(f"the expected answer lacks '{word}'")
    return reasons


def run_example(memory: Memory, example: dict[str, Any], *, top_n: int = TOP_N) -> ExampleResult:
    request = pipeline.RecallRequest(
        context=RecallContext(query=str(example.get("user", ""))), spaces=(memory.space.slug,), k=top_n
    )
    ids = [item.id for item in pipeline.recall(actor=SYSTEM, request=request).items]
    rank = ids.index(memory.id) + 1 if memory.id in ids else None
    negative = training.NOT_RECALLED in [str(a).strip().lower() for a in example.get("assertions", [])]
    reasons = _assertions_hold(example)
    if negative and rank is not None:
        reasons.append(f"recalled at rank {rank} for a request it should not answer")
    if not negative and rank is None:
        reasons.append(f"not in recall's top {top_n}")
    return ExampleResult(id=str(example.get("id", "")), passed=not reasons, rank=rank, reasons=reasons,
                         returned=len(ids))


def run_memory(memory: Memory, *, now: datetime | None = None, actor: Actor = SYSTEM) -> TrainingRun | None:
    """Run the memory's examples and keep the run, audited as a recall on behalf of `actor`
    (who asked for it: SAM itself for the nightly and after-edit runs); None, recalling and
    auditing nothing, when its space's mode keeps it out of recall (capture_only, off),
    where a test cannot say anything."""
    if not policy.policy(SYSTEM, memory.space).recall:
        return None
    examples, suggested = examples_of(memory)
    results = [run_example(memory, example) for example in examples]
    passed = sum(1 for r in results if r.passed)
    with transaction.atomic():
        run = TrainingRun.objects.create(
            memory=memory,
            ran_at=now or timezone.now(),
            examples=len(results),
            passed=passed,
            pass_rate=round(passed / len(results), 4) if results else 1.0,
            suggested=suggested,
            results=[{"id": r.id, "passed": r.passed, "rank": r.rank, "reasons": r.reasons} for r in results],
        )
        # Untracked, as the recalls ran (no RecallEvent, no access counters): counts only.
        audit_record("recall", actor=actor, space=memory.space, target=run,
                     after={"items": sum(r.returned for r in results), "recalls": len(results),
                            "tracked": False, "purpose": "micro_training"})
    return run


def due(limit: int = NIGHTLY_LIMIT, *, memory_ids: list[str] | None = None) -> list[Memory]:
    """Active, embedded memories never tested or changed since their last run, oldest change
    first."""
    last = TrainingRun.objects.filter(memory=OuterRef("pk")).order_by("-ran_at").values("ran_at")[:1]
    queryset = Memory.objects.all() if memory_ids is None else Memory.objects.filter(pk__in=memory_ids)
    return list(
        queryset.select_related("space")
        .filter(archived=False, embedding_status="ready")
        .annotate(last_run=Subquery(last))
        .filter(Q(last_run__isnull=True) | Q(last_run__lt=F("updated_at")))
        .order_by("updated_at", "id")[:limit]
    )


def run_due(*, limit: int = NIGHTLY_LIMIT, memory_ids: list[str] | None = None) -> list[TrainingRun]:
    """Test what changed (or was never tested), all of it nightly or `memory_ids` after an
    edit; returns the runs made."""
    runs = [run_memory(memory) for memory in due(limit, memory_ids=memory_ids)]
    return [run for run in runs if run is not None]


def after_edit(memory_ids: list[str]) -> None:
    """memories.settle: an edited memory is settled (its new vector stored, or its text left
    alone): queue a run of its examples, so the panel shows at once what the edit did.

    New memories wait for the nightly run: an import of thousands must not queue
    thousands of recalls.
    """
    edited = list(Memory.objects.filter(pk__in=memory_ids, version__gt=1, archived=False)
                  .values_list("pk", flat=True))
    if edited:
        enqueue("retrieval.tasks.training_run", memory_ids=edited, task_name=f"training {len(edited)}",
                   group="training")
