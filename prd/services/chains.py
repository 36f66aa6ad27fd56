"""Thinking chains: start, thoughts, complete or abandon; the summary, embedding and memories."""

from __future__ import annotations

import logging
from dataclasses import replace

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core.actor import Actor
from core.errors import Conflict
from core.models import Space
from core.results import WriteResult
from governance import access, policy
from governance.audit.services import audit_record
from governance.crypto import datakeys, search

# Looked up through the module at call time, so a test can swap the provider.
from memories.embeddings import registry as embeddings
from memories.embeddings.base import EmbeddingError
from memories.normalize import clean_line
from prd import formation, limits, thoughts
from prd.digest import chain_digest
from prd.models import (
    ChainStatus,
    PRDExecution,
    ThinkingChain,
)
from prd.selectors import ChainRecall, chains_recall
from prd.services.common import (
    collecting_redactions,
    enqueue,
    invalid,
    redact,
    refused,
    schedule_retry,
    text,
    writable,
)
from prd.services.compaction import CompactionOutcome, keeps_better_summary
from prd.services.memory_formation import Gate, form, form_or_refresh, formation_gate
from prd.summarizers import registry

logger = logging.getLogger(__name__)


# --- thinking chains ------------------------------------------------------------------

def _chain_text(chain: ThinkingChain) -> str:
    return "\n".join(t["content"] for t in chain.thoughts)


def _refresh_chain_search(chain: ThinkingChain) -> None:
    """Keyed search tokens (governance.crypto.search): query A, summary B, thoughts C."""
    doc = {"title": chain.query, "summary": chain.summary, "content": _chain_text(chain)}
    vector = search.token_vectors(datakeys.active_key_id(chain.space_id), [doc])[0]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE prd_thinkingchain SET search_vector = %s::tsvector WHERE id = %s",
                       [vector, chain.pk])


def _locked_chain(actor: Actor, chain_id: str) -> ThinkingChain:
    queryset = ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
    return access.access_object(queryset, actor, pk=chain_id, action="write", label="thinking chain")


@transaction.atomic
def chain_start(*, actor: Actor, space: str, query: str, agent_id: str = "",
                execution_id: str | None = None) -> WriteResult[ThinkingChain]:
    """Start a chain of thoughts on `query`, optionally tied to a PRD execution of the space."""
    target_space = access.access_space(actor, slug=space, action="write")
    outcome_of_mode = writable(actor, target_space)
    execution = None
    if execution_id:
        execution = PRDExecution.objects.filter(pk=execution_id, space=target_space).first()
        if execution is None:
            raise invalid("execution", f"No PRD execution '{execution_id}' in space '{space}'.")
    with collecting_redactions() as report:
        cleaned_query = text(query, field_name="query", bounds=limits.CHAIN_QUERY)
    chain = ThinkingChain(
        space=target_space, execution=execution, agent_id=clean_line(agent_id), query=cleaned_query,
        created_by=access.user_or_none(actor),
    )
    chain.save()
    _refresh_chain_search(chain)
    audit_record("create", actor=actor, space=target_space, target=chain, after={"query": chain.query},
           digest_text=True)
    policy.keep_or_discard(outcome_of_mode)
    return WriteResult(chain, redaction_report=report)


@transaction.atomic
def thought_add(*, actor: Actor, chain_id: str, data: thoughts.ThoughtInput) -> WriteResult[ThinkingChain]:
    """Append a thought. 409 when the chain is closed or `number` is stale; 400 when
    `revises` or the branch fields do not fit the chain (prd.thoughts)."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = writable(actor, chain.space)
    if chain.status != ChainStatus.ACTIVE:
        raise Conflict(f"Thinking chain '{chain.id}' is {chain.status}; it takes no more thoughts.",
                       fields={"status": [chain.status]})
    with collecting_redactions() as report:
        content = text(data.content, field_name="content", bounds=limits.THOUGHT)
    try:
        thought = thoughts.next_thought(chain.thoughts, replace(data, content=content))
    except thoughts.ThoughtRefused as exc:
        raise refused(exc) from None
    thought["created_at"] = timezone.now().isoformat().replace("+00:00", "Z")
    chain.thoughts = [*chain.thoughts, thought]
    chain.save(update_fields=["thoughts", "updated_at"])
    _refresh_chain_search(chain)
    audit_record("edit", actor=actor, space=chain.space, target=chain,
           after={"thought": thought["number"], "content": thought["content"]}, digest_text=True)
    policy.keep_or_discard(outcome_of_mode)
    return WriteResult(chain, redaction_report=report)


@transaction.atomic
def chain_complete(*, actor: Actor, chain_id: str) -> WriteResult[ThinkingChain]:
    """Close the chain and enqueue its summary, embedding and memories. Idempotent.

    Like every write, 409 while the space (or the caller's mode) is paused or off."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = writable(actor, chain.space)
    if chain.status == ChainStatus.COMPLETED:
        return WriteResult(chain)
    if chain.status == ChainStatus.ABANDONED:
        raise Conflict(f"Thinking chain '{chain.id}' was abandoned.", fields={"status": ["abandoned"]})
    if not chain.thoughts:
        raise Conflict("A chain needs at least one thought to complete.", fields={"thoughts": ["Empty."]})
    chain.status = ChainStatus.COMPLETED
    chain.completed_at = timezone.now()
    chain.save(update_fields=["status", "completed_at", "updated_at"])
    _refresh_chain_search(chain)
    enqueue("prd.tasks.chain_summarise", chain_id=chain.id)
    audit_record("edit", actor=actor, space=chain.space, target=chain,
           before={"status": ChainStatus.ACTIVE}, after={"status": ChainStatus.COMPLETED})
    policy.keep_or_discard(outcome_of_mode)
    return WriteResult(chain)


@transaction.atomic
def chain_abandon(*, actor: Actor, chain_id: str, reason: str = "") -> WriteResult[ThinkingChain]:
    """Close the chain without a summary or memories. Idempotent; a completed chain is 409."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = writable(actor, chain.space)
    if chain.status == ChainStatus.ABANDONED:
        return WriteResult(chain)
    if chain.status == ChainStatus.COMPLETED:
        raise Conflict(f"Thinking chain '{chain.id}' is completed.", fields={"status": ["completed"]})
    with collecting_redactions() as report:
        cleaned = redact(clean_line(reason), path="reason")
    if len(cleaned) > limits.ABANDON_REASON_MAX:
        raise invalid("reason", f"Must be at most {limits.ABANDON_REASON_MAX} characters.")
    chain.status, chain.abandon_reason = ChainStatus.ABANDONED, cleaned
    chain.save(update_fields=["status", "abandon_reason", "updated_at"])
    # The reason stays readable on the chain (sealed, gone with it); the append-only log
    # keeps only its fingerprint, so the text does not outlive the chain.
    audit_record("edit", actor=actor, space=chain.space, target=chain, digest_text=True,
           before={"status": ChainStatus.ACTIVE}, after={"status": ChainStatus.ABANDONED, "reason": cleaned})
    policy.keep_or_discard(outcome_of_mode)
    return WriteResult(chain, redaction_report=report)


@transaction.atomic
def chain_summary_enqueue(*, actor: Actor, chain_id: str) -> bool:
    """Queue the chain's summary again (the admin's action). False when it is not completed."""
    chain = _locked_chain(actor, chain_id)
    if chain.status != ChainStatus.COMPLETED:
        return False
    enqueue("prd.tasks.chain_summarise", chain_id=chain.id)
    return True


def chain_embed(*, chain_id: str) -> bool:
    """Embed the chain's query and summary with the configured model. Returns True when done.

    Called outside transactions (the model call takes milliseconds to seconds); the write
    only lands if the summary it embedded is still the chain's summary.
    """
    chain = ThinkingChain.objects.filter(pk=chain_id).only("id", "space_id", "query", "summary",
                                                           "summarized_at").first()
    if chain is None:
        return False
    provider = embeddings.get_provider()
    try:
        vector = provider.embed([f"{chain.query}\n{chain.summary}"])[0]
    except EmbeddingError as exc:
        logger.warning("embedding thinking chain %s failed: %s", chain_id, exc)
        return False
    # The summary is sealed, so "still the same summary" is checked by its time stamp.
    return bool(ThinkingChain.objects.filter(pk=chain_id, summarized_at=chain.summarized_at).update(
        embedding=vector.tolist(), embedding_model=provider.name))


def chain_summarise(*, chain_id: str, attempt: int = 1) -> CompactionOutcome:
    """Summarise a completed chain, embed it, and form its memories: the summary (semantic)
    and one procedural memory per revision (docs/prd.md, "Thinking chains"). Safe to run twice."""
    outcome = CompactionOutcome()
    chain = ThinkingChain.objects.select_related("space").filter(pk=chain_id).first()
    if chain is None or chain.status != ChainStatus.COMPLETED:
        logger.info("summary: thinking chain %s is gone or not completed", chain_id)
        return outcome
    gate = formation_gate(chain.space)
    if gate is Gate.DEFER:
        # Paused or incognito: summarized_at stays unset, so the sweep summarises it later.
        outcome.deferred = True
        return outcome
    if gate is Gate.SKIP:
        _chain_not_captured(chain_id)
        return outcome
    summary = registry.summarise(chain_digest(query=chain.query, thoughts=chain.thoughts))
    with transaction.atomic():
        locked = (ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
                  .get(pk=chain_id))
        if formation_gate(locked.space) is not Gate.FORM:
            outcome.deferred = True  # the mode changed while the summariser ran
            return outcome
        if not keeps_better_summary(locked.summary_source, summary):
            # A model may write what the log never said (an address, a key): redact it
            # as any stored text (the extractive text is already clean).
            locked.summary = redact(summary.text, path="summary")
            locked.summary_source = summary.source
        locked.summary_attempts = attempt
        locked.summarized_at = timezone.now()
        locked.save(update_fields=["summary", "summary_source", "summary_attempts", "summarized_at",
                                   "updated_at"])
        _refresh_chain_search(locked)
        pairs = thoughts.revisions(locked.thoughts)
        revisions = form([formation.plan_chain_revision(locked, o, r) for o, r in pairs])
        if not form_or_refresh(formation.plan_chain_summary(locked, locked.summary)) or revisions.deferred:
            transaction.set_rollback(True)
            outcome.deferred = True
            return outcome
        outcome.formed = len(revisions.formed)
        if summary.fallback_reason and attempt < int(settings.SAM_SUMMARIZER["MAX_ATTEMPTS"]):
            schedule_retry("prd.tasks.chain_summarise", attempt=attempt, chain_id=chain_id)
            outcome.retry_scheduled = True
    chain_embed(chain_id=chain_id)
    outcome.summary_source = locked.summary_source
    return outcome


@transaction.atomic
def _chain_not_captured(chain_id: str) -> None:
    """An `off` space captures nothing: no summary and no embedding; its revision memories
    are linked as not captured. Marked summarised, so the sweep stops coming back."""
    chain = ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space").get(
        pk=chain_id)
    pairs = thoughts.revisions(chain.thoughts)
    form([formation.plan_chain_revision(chain, o, r) for o, r in pairs], gate=Gate.SKIP)
    if chain.summarized_at is None:
        chain.summarized_at = timezone.now()
        chain.save(update_fields=["summarized_at", "updated_at"])


def chains_recall_run(*, actor: Actor, query: str, spaces: list[str] | None = None,
                      k: int = limits.RECALL_K_DEFAULT,
                      statuses: tuple[str, ...] = (ChainStatus.COMPLETED,)) -> ChainRecall:
    """recall_reasoning (prd.selectors.chains_recall), audited like an untracked memory
    recall (docs/audit.md, "Which recalls are audited"): one `recall` row per space it read,
    with the chains it returned from that space; one without a space when it read none (and
    the spaces its modes silenced). Counts only: no query, no chain ids.

    The recall (which embeds the query) runs outside the transaction of its audit rows.
    """
    found = chains_recall(actor=actor, query=query, spaces=spaces, k=k, statuses=statuses)
    returned: dict[int, int] = {}
    for match in found.results:
        returned[match.chain.space_id] = returned.get(match.chain.space_id, 0) + 1
    read = list(Space.objects.filter(pk__in=found.read).order_by("pk"))
    with transaction.atomic():
        for space in read:
            audit_record("recall", actor=actor, space=space, target_type="recall",
                         after={"items": returned.get(space.pk, 0), "tracked": False,
                                "purpose": "reasoning_recall"})
        if not read:
            after: dict = {"items": 0, "tracked": False, "purpose": "reasoning_recall"}
            if found.silenced:
                after["silenced"] = list(found.silenced)
            audit_record("recall", actor=actor, target_type="recall", after=after)
    return found
