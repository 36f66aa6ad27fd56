"""The scheduled maintenance of SAM, by period (docs/lifecycle.md, "Jobs"): which app's job
runs when. Each job is its app's own; this module only wires them together, for the
django-q2 schedules (`sam_schedules`) and `manage.py sam_maintenance`.

- nightly: the decay pass, the write checks (near duplicates, supersession) the embedding
  job left unfinished, duplicate consolidation (exact duplicates merged, near duplicates
  queued for review), archive suggestions, pruning in spaces that opt in, the training
  examples of memories changed since their last run (failures queued for review),
  entities no memory names any more, and a chat user's notes (idle high notes lowered to
  normal, user spaces trimmed to their note cap);
- weekly: memory cards whose last check is older than their TTL recorded as stale, and PRD
  summaries and formation left behind;
- monthly: statistics refreshed for the planner and recall, and the lifecycle statistics.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from memories.entities import linking as entities
from memories.lifecycle import maintenance, user_notes, write_checks
from prd import tasks as prd_tasks
from prd.sessions import cards as session_cards
from retrieval import training
from retrieval.tasks import lexeme_stats_refresh

logger = logging.getLogger(__name__)

PERIODS = ("nightly", "weekly", "monthly")


def nightly(*, dry_run: bool = False) -> dict[str, Any]:
    decayed = maintenance.decay_pass(dry_run=dry_run)
    # Write checks the embedding job could not finish (a failed batch, a paused space).
    checks = write_checks.CheckReport() if dry_run else write_checks.finish()
    duplicates = maintenance.consolidate_duplicates(dry_run=dry_run)
    # A dry run has not lowered anything: suggestions are listed from the stored values.
    suggested = maintenance.archive_suggestions(dry_run=dry_run)
    pruned = maintenance.prune(dry_run=dry_run)
    lowered = user_notes.lower_idle_high(dry_run=dry_run)
    trimmed = user_notes.trim(dry_run=dry_run)
    tested = [] if dry_run else training.run_due()
    # Memories changed today linked again (a settle whose linking failed), and names no
    # memory mentions any more (a path that deleted memories without releasing them).
    relinked = 0 if dry_run else entities.catch_up()
    orphaned = 0 if dry_run else entities.drop_orphans_everywhere()
    failing = {run.memory_id: run.pass_rate for run in tested if run.passed < run.examples}
    maintenance.queue_training_failures(failing)
    return {
        "period": "nightly",
        "dry_run": dry_run,
        "decay": asdict(decayed),
        "write_checks": checks.as_dict(),
        "duplicates_merged": {kept: merged for kept, merged in duplicates.merged.items()},
        "near_duplicates_queued": len(duplicates.near_duplicates),
        "archive_suggestions": len(suggested),
        "pruned": len(pruned.pruned),
        "training_runs": len(tested),
        "entity_links_made": relinked,
        "entities_dropped": orphaned,
        "training_failures": sorted(failing),
        "pruned_memories": pruned.pruned,
        "prune_skipped_spaces": pruned.skipped_spaces,
        "user_notes_lowered": len(lowered.lowered),
        "user_notes_trimmed": len(trimmed.archived),
        "user_spaces_over_cap": trimmed.over_cap,
    }


def weekly(*, dry_run: bool = False) -> dict[str, Any]:
    stale = session_cards.cards_ttl_check(dry_run=dry_run)
    swept = {} if dry_run else prd_tasks.prd_sweep()
    return {"period": "weekly", "dry_run": dry_run, "cards_gone_stale": stale, "prd_sweep": swept}


def monthly(*, dry_run: bool = False) -> dict[str, Any]:
    if not dry_run:
        maintenance.refresh_planner_statistics()
        lexeme_stats_refresh()
    return {"period": "monthly", "dry_run": dry_run, "statistics": maintenance.statistics()}


def run(period: str, *, dry_run: bool = False) -> dict[str, Any]:
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}")
    report = {"nightly": nightly, "weekly": weekly, "monthly": monthly}[period](dry_run=dry_run)
    logger.info("maintenance %s%s done", period, " (dry run)" if dry_run else "")
    return report
