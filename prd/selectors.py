"""Permission-aware reads of PRD executions and thinking chains, through governance.access.

The resume context is the hot read: a handful of indexed queries whatever the log's
length (recent events by sequence, decisions, the fix events and what they fixed, the
open blockers and failures by id, the newest runs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from core.actor import Actor
from core.errors import NotFound
from core.text import SEARCH_CONFIG
from governance import access, policy
from governance.crypto import search as crypto_search

# Looked up through the module at call time, so a test can swap the provider.
from memories.embeddings import registry as embeddings
from memories.embeddings.base import EmbeddingError
from prd import limits
from prd.learnings import Learning, learning_of
from prd.models import ChainStatus, PRDDecision, PRDEvent, PRDExecution, PRDRun, ThinkingChain
from prd.progress import Fold

logger = logging.getLogger(__name__)


# --- executions -----------------------------------------------------------------------

@dataclass(frozen=True)
class ExecutionFilters:
    spaces: list[str] = field(default_factory=list)
    status: str | None = None
    prd_ref: str | None = None


def execution_list(*, actor: Actor, filters: ExecutionFilters) -> QuerySet[PRDExecution]:
    queryset = access.restrict(PRDExecution.objects.select_related("space"), actor)
    if filters.spaces:
        queryset = queryset.filter(space__slug__in=filters.spaces)
    if filters.status:
        queryset = queryset.filter(status=filters.status)
    if filters.prd_ref:
        queryset = queryset.filter(prd_ref=filters.prd_ref)
    return queryset.order_by("-updated_at", "id")


def execution_get(*, actor: Actor, execution_id: str) -> PRDExecution:
    return access.access_object(PRDExecution.objects.select_related("space"), actor, pk=execution_id,
                                label="PRD execution")


@dataclass(frozen=True)
class EventFilters:
    type: str | None = None
    requirement_id: str | None = None
    after_sequence: int | None = None


def event_list(*, actor: Actor, execution_id: str, filters: EventFilters) -> QuerySet[PRDEvent]:
    """The full log of an execution, oldest first (compaction never removes events)."""
    execution = execution_get(actor=actor, execution_id=execution_id)
    queryset = execution.events.all()
    if filters.type:
        queryset = queryset.filter(type=filters.type)
    if filters.requirement_id:
        queryset = queryset.filter(requirement_id=filters.requirement_id)
    if filters.after_sequence is not None:
        queryset = queryset.filter(sequence__gt=filters.after_sequence)
    return queryset.order_by("sequence")


def decision_list(*, actor: Actor, execution_id: str) -> QuerySet[PRDDecision]:
    execution = execution_get(actor=actor, execution_id=execution_id)
    return execution.decisions.order_by("created_at", "id")


@dataclass
class ResumeContext:
    """What an agent needs to pick up a PRD where it was left (docs/prd.md, "The resume context")."""

    execution: PRDExecution
    recent_events: list[PRDEvent]
    decisions: list[PRDDecision] | None
    learnings: list[Learning]
    learnings_total: int
    open_blockers: list[PRDEvent]
    open_failures: list[PRDEvent]
    prd_changes: dict[str, Any]
    last_prd_change: PRDRun | None
    runs: int

    @property
    def progress(self) -> dict[str, list[str]]:
        return self.execution.progress


def execution_context(*, actor: Actor, execution_id: str,
                      event_limit: int = limits.CONTEXT_EVENT_LIMIT_DEFAULT,
                      include_decisions: bool = True,
                      learning_limit: int = limits.CONTEXT_LEARNING_LIMIT_DEFAULT) -> ResumeContext:
    """The resume context: progress, the newest `event_limit` events (oldest first), every
    decision, the newest `learning_limit` learnings (problem and fix, oldest first), open
    blockers and failures, and what changed in the PRD at the newest run (plus the newest
    run that changed it)."""
    execution = execution_get(actor=actor, execution_id=execution_id)
    return context_of(execution, event_limit=event_limit, include_decisions=include_decisions,
                      learning_limit=learning_limit)


def context_of(execution: PRDExecution, *, event_limit: int, include_decisions: bool,
               learning_limit: int) -> ResumeContext:
    """execution_context for an execution the caller already got through execution_get."""
    fold = Fold.from_json(execution.state)
    blocker_ids = fold.open_blocker_ids()
    failure_ids = list(fold.open_failures.values())
    # One query for every event the context shows: the newest ones, the newest fixes and
    # the problems they fixed, and the open blockers and failures.
    resolving = execution.events.filter(resolves__isnull=False).order_by("-sequence")
    first_recent = execution.event_count - event_limit
    wanted = Q(sequence__gt=first_recent) | Q(pk__in=blocker_ids + failure_ids)
    if learning_limit:
        wanted |= Q(pk__in=resolving.values("pk")[:learning_limit])
        wanted |= Q(pk__in=resolving.values("resolves_id")[:learning_limit])
    events = list(execution.events.filter(wanted).order_by("sequence"))
    by_id: dict[str | None, PRDEvent] = {e.id: e for e in events}
    # Problems never close anything themselves, so the events with `resolves` are fixes.
    fixes = [e for e in events if e.resolves_id][-learning_limit:] if learning_limit else []
    learnings = [learning_of(fix, problem=by_id[fix.resolves_id]) for fix in fixes]
    decisions = list(execution.decisions.order_by("created_at", "id")) if include_decisions else None
    newest, last_change = _newest_runs(execution)
    return ResumeContext(
        execution=execution,
        recent_events=[e for e in events if e.sequence > first_recent],
        decisions=decisions,
        learnings=[learning for learning in learnings if learning is not None],
        learnings_total=execution.learning_count,
        open_blockers=[by_id[i] for i in blocker_ids if i in by_id],
        open_failures=[by_id[i] for i in failure_ids if i in by_id],
        prd_changes=newest.changes if newest else {},
        last_prd_change=last_change,
        runs=newest.number if newest else 0,
    )


def _newest_runs(execution: PRDExecution) -> tuple[PRDRun | None, PRDRun | None]:
    """The newest run and the newest run that changed the PRD, in one query."""
    newest = execution.runs.order_by("-number")[:1]
    changed = execution.runs.filter(prd_changed=True).order_by("-number")[:1]
    runs = sorted(newest.union(changed), key=lambda r: -r.number)
    if not runs:
        return None, None
    return runs[0], next((r for r in runs if r.prd_changed), None)


# --- thinking chains ------------------------------------------------------------------

@dataclass(frozen=True)
class ChainFilters:
    spaces: list[str] = field(default_factory=list)
    status: str | None = None
    execution: str | None = None
    # Words of the query, summary or thoughts (web-search syntax), or a chain id.
    text: str | None = None


def chain_list(*, actor: Actor, filters: ChainFilters) -> QuerySet[ThinkingChain]:
    queryset = access.restrict(ThinkingChain.objects.select_related("space"), actor).defer(
        "embedding", "search_vector")
    if filters.spaces:
        queryset = queryset.filter(space__slug__in=filters.spaces)
    if filters.status:
        queryset = queryset.filter(status=filters.status)
    if filters.execution:
        queryset = queryset.filter(execution_id=filters.execution)
    if filters.text:
        # The text is sealed; the index holds keyed tokens, never words (as for memories).
        spaces = access.spaces_visible(actor)
        if filters.spaces:
            spaces = spaces.filter(slug__in=filters.spaces)
        queryset = queryset.filter(crypto_search.text_match(spaces.values_list("pk", flat=True),
                                                            filters.text))
    return queryset.order_by("-updated_at", "id")


def chain_get(*, actor: Actor, chain_id: str) -> ThinkingChain:
    queryset = ThinkingChain.objects.select_related("space").defer("embedding", "search_vector")
    return access.access_object(queryset, actor, pk=chain_id, label="thinking chain")


@dataclass
class ChainMatch:
    chain: ThinkingChain
    score: float
    similarity: float | None
    text_rank: float


# Similarity carries meaning across wordings; the text rank rewards shared rare words.
SIMILARITY_WEIGHT = 0.7
TEXT_WEIGHT = 0.3


@dataclass
class ChainRecall:
    results: list[ChainMatch]
    # Spaces (named or visible) whose memory mode keeps them out of recall (capture_only, off).
    silenced: list[str] = field(default_factory=list)
    # The spaces the recall read (their ids): where it is audited (prd.services.chains_recall_run).
    read: list[int] = field(default_factory=list)


def _recall_spaces(actor: Actor, spaces: list[str]) -> tuple[list[int], list[str]]:
    """The ids of the spaces this recall may read and the slugs its modes silenced.

    As memory recall does (retrieval.pipeline): a named space the caller cannot see is 404
    exactly like one that does not exist, and a space whose mode (the space's or the
    caller's, governance.policy) does not recall is left out and reported as silenced.
    """
    visible = access.spaces_visible(actor).only("id", "slug", "mode").order_by("id")
    if spaces:
        visible = visible.filter(slug__in=spaces)
    found = list(visible)
    missing = sorted(set(spaces) - {space.slug for space in found})
    if missing:
        raise NotFound("Unknown spaces.", fields={"spaces": [f"No space '{s}'." for s in missing]})
    recalled = [space for space in found if policy.policy(actor, space).recall]
    silenced = [space.slug for space in found if space not in recalled]
    return [space.pk for space in recalled], silenced


def _lexemes(text: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s))", [SEARCH_CONFIG, text])
        return [row[0] for row in cursor.fetchall()]


def chains_recall(*, actor: Actor, query: str, spaces: list[str] | None = None,
                  k: int = limits.RECALL_K_DEFAULT,
                  statuses: tuple[str, ...] = (ChainStatus.COMPLETED,)) -> ChainRecall:
    """recall_reasoning: past chains most like `query`, by embedding and by text.

    score = 0.7 x cosine similarity (chains embedded by the configured model) + 0.3 x the
    full-text rank (normalised to 0-1) of the query's words in query, summary and thoughts.
    Without a usable query embedding it ranks by text alone. Raises NotFound (404) for a
    named space the caller cannot see; spaces in capture_only or off mode are silenced.
    """
    space_ids, silenced = _recall_spaces(actor, spaces or [])
    if not space_ids or not query.strip():
        return ChainRecall(results=[], silenced=silenced)
    provider = embeddings.get_provider()
    try:
        vector = "[" + ",".join(f"{float(x):.7g}" for x in provider.embed([query])[0]) + "]"
    except EmbeddingError as exc:
        logger.warning("recall_reasoning without a query embedding: %s", exc)
        vector = None
    # OR the query's lexemes (an AND of every word of a sentence rarely matches anything),
    # as keyed tokens: the index holds tokens, never words (governance.crypto.search).
    tokens = crypto_search.query_tokens(space_ids, _lexemes(query))
    tsq = " | ".join(f"'{token}'" for token in sorted(tokens)) or None
    sql = """
        WITH q AS (SELECT %(tsq)s::tsquery AS tsq)
        SELECT c.id, similarity, text_rank,
               %(sw)s * COALESCE(similarity, 0) + %(tw)s * text_rank AS score
        FROM (
            SELECT c.id,
                   CASE WHEN %(vector)s::text IS NOT NULL AND c.embedding_model = %(model)s
                        THEN 1 - (c.embedding <=> %(vector)s::vector) END AS similarity,
                   COALESCE(ts_rank_cd(c.search_vector, q.tsq, 32), 0) AS text_rank
            FROM prd_thinkingchain c, q
            WHERE c.space_id = ANY(%(spaces)s) AND c.status = ANY(%(statuses)s)
              AND ((%(vector)s::text IS NOT NULL AND c.embedding_model = %(model)s
                    AND c.embedding IS NOT NULL)
                   OR c.search_vector @@ q.tsq)
        ) c
        ORDER BY score DESC, c.id
        LIMIT %(k)s
    """
    params = {"tsq": tsq, "vector": vector, "model": provider.name, "spaces": space_ids,
              "statuses": list(statuses), "k": k, "sw": SIMILARITY_WEIGHT, "tw": TEXT_WEIGHT}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    chains = ThinkingChain.objects.select_related("space").defer("embedding", "search_vector").in_bulk(
        [r[0] for r in rows])
    return ChainRecall(results=[ChainMatch(chain=chains[i], score=round(float(score), 4),
                                           similarity=None if sim is None else round(float(sim), 4),
                                           text_rank=round(float(rank), 4))
                                for i, sim, rank, score in rows if i in chains],
                       silenced=silenced, read=space_ids)
