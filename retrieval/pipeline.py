"""The recall pipeline: context -> scope -> candidates -> signals -> rank -> explain.

`recall()` is a read: it builds the answer and returns it with the stage timings.
Side effects (access counts, the recall event) are a separate service call, so tests and
benchmarks can run the same pipeline without changing the store.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from core.actor import Actor
from core.errors import InvalidInput, NotFound
from core.models import Space
from core.replica import read_alias, reading_connection
from governance import access, policy
from memories.categories.services import summary_lines as category_summary_lines
from memories.entities import graph
from memories.entities import hops as entity_hops
from memories.models import Category, MemoryCategory
from retrieval import caches, channels, explain, scoring, timeframe
from retrieval.caches import embed_query
from retrieval.channels import MEMORY, MEMORY_STATS, Filters, Scope
from retrieval.context import RecallContext, build_query_text, contextual_cue
from retrieval.tokens import count_many

QUERY_TYPES = ("semantic", "task", "topic", "recent", "timeline")


@dataclass(frozen=True)
class RecallRequest:
    context: RecallContext
    spaces: tuple[str, ...] = ()
    k: int = 5
    query_type: str = "semantic"
    topic: str = ""
    profile: str | None = None
    weights: dict[str, float] | None = None
    thresholds: dict[str, float] | None = None
    filters: Filters = field(default_factory=Filters)
    token_budget: int | None = None
    as_of: datetime | None = None
    # Broad questions: the summaries of the categories the best items belong to, first.
    tiered: bool = False

    def cache_key(self, actor_id: Any, scope: Scope) -> str:
        # The scope carries the caller's visibility, so a changed role or restriction
        # never serves an answer computed under the old rules.
        raw = repr((actor_id, scope, self))
        return hashlib.sha256(raw.encode()).hexdigest()


@dataclass
class RankedItem:
    row: dict[str, Any]
    signals: scoring.Signals
    score: float
    rationale: str = ""
    highlights: list[str] = field(default_factory=list)
    conflict: dict[str, Any] | None = None
    tokens: int = 0
    # How the graph reached it: "linked to “…” by SOLVED_BY".
    link: str = ""

    @property
    def id(self) -> str:
        return self.row["id"]


@dataclass
class RecallResult:
    query_text: str
    profile: scoring.Profile
    items: list[RankedItem]
    follow_ups: list[dict[str, Any]]
    fail_safe: bool
    timings_ms: dict[str, float]
    spaces: list[str]
    candidates: int = 0
    trimmed: int = 0
    cached: bool = False
    # False when a memory mode (capture_only, paused, incognito, off) forbids traces.
    track: bool = True
    # Requested spaces whose mode keeps them out of recall (capture_only, off).
    silenced: list[str] = field(default_factory=list)
    # Every space the recall looked at (read or silenced), as of this request: what the
    # recall's audit rows are written under.
    looked_at: list[Space] = field(default_factory=list)
    # With `tiered`: [{space, name, display_name, summary, items}], strongest first.
    category_summaries: list[dict[str, Any]] = field(default_factory=list)


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def stage(self, name: str, func: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return func()
        finally:
            self.timings[name] = round(self.timings.get(name, 0) + (time.perf_counter() - start) * 1000, 3)


# --- the pipeline ---------------------------------------------------------------------

@dataclass(frozen=True)
class _ScopeAnswer:
    scope: Scope
    slugs: list[str]
    track: bool
    silenced: list[str]
    looked_at: list[Space]


def _scope(actor: Actor, request: RecallRequest) -> _ScopeAnswer:
    """The spaces and memories this recall may read, after roles and memory modes."""
    columns = ("id", "slug", "mode")
    if request.spaces:
        # The rights of the named spaces only: a user in a thousand spaces asking about
        # five does not gather the other 995.
        named = list(Space.objects.filter(slug__in=request.spaces).order_by("id").only(*columns))
        granted = access.rights(actor, only=[space.pk for space in named])
        spaces = [space for space in named if space.pk in granted]
    else:
        granted = access.rights(actor)
        spaces = list(Space.objects.filter(pk__in=list(granted)).order_by("id").only(*columns))
    if request.spaces:
        missing = sorted(set(request.spaces) - {space.slug for space in spaces})
        if missing:
            # Reported like any other space the caller cannot see: as missing.
            raise NotFound("Unknown spaces.", fields={"spaces": [f"No space '{s}'." for s in missing]})
    policies = {space.pk: policy.policy(actor, space) for space in spaces}
    # A recall leaves traces only when every space it names allows them (a capture_only
    # or off space must not learn what was asked) and so does the user's own mode.
    track = all(p.track for p in policies.values()) and policy.policy_for(policy.user_mode(actor)).track
    silenced = [space.slug for space in spaces if not policies[space.pk].recall]
    looked_at = spaces
    spaces = [space for space in spaces if policies[space.pk].recall]
    visibility = access.memory_visibility(actor, {space.pk for space in spaces}, granted=granted)
    tags = tuple(sorted(set(request.filters.tags) | ({request.topic} if request.topic else set())))
    scope = Scope(space_ids=tuple(space.pk for space in spaces),
                  filters=replace(request.filters, tags=tags), visibility=visibility)
    return _ScopeAnswer(scope, [space.slug for space in spaces], track, silenced, looked_at)


def recall(*, actor: Actor, request: RecallRequest, use_cache: bool = True) -> RecallResult:
    """Run the pipeline for `actor`. Raises InvalidInput for requests it cannot serve."""
    timer = _Timer()
    started = time.perf_counter()
    answer = timer.stage("scope", lambda: _scope(actor, request))
    scope, slugs = answer.scope, answer.slugs
    query_text = build_query_text(request.context)
    if request.query_type in {"semantic", "task"} and not query_text:
        raise InvalidInput(
            "Nothing to recall from.",
            fields={"query": ["Give a query, a conversation, an active task or ui_state."]},
        )
    if request.query_type == "task" and not request.context.active_task:
        raise InvalidInput("A task query needs the active task.",
                           fields={"active_task": ["This field is required for query_type=task."]})
    if request.query_type == "timeline" and not (request.filters.after or request.filters.before):
        raise InvalidInput("A timeline needs a time range.",
                           fields={"filters.after": ["Give after and/or before."]})
    try:
        profile = scoring.resolve_profile(request.profile, weights=request.weights,
                                          thresholds=request.thresholds)
    except KeyError:
        raise InvalidInput("Unknown profile.", fields={
            "profile": [f"Known profiles: {', '.join(scoring.PROFILES)}."]}) from None

    cache_key = None
    if use_cache and scope.space_ids:
        generations = caches.generations(scope.space_ids)
        cache_key = "sam:recall:" + request.cache_key(getattr(actor, "pk", None), scope) + \
            ":" + ",".join(generations)
        hit = cache.get(cache_key)
        if hit is not None:
            hit.cached = True
            hit.timings_ms = {"cache": round((time.perf_counter() - started) * 1000, 3)}
            # The modes as they are now, not as when the answer was cached.
            hit.track, hit.silenced, hit.looked_at = answer.track, answer.silenced, answer.looked_at
            return hit

    now = request.as_of or timezone.now()
    if not scope.space_ids:
        result = RecallResult(query_text, profile, [], [], True, timer.timings, slugs)
    elif request.query_type in {"recent", "timeline"} or (request.query_type == "topic" and not query_text):
        result = _listing(scope, request, profile, query_text, now, timer, slugs)
    else:
        result = _ranked(scope, request, profile, query_text, now, timer, slugs, actor=actor)
    result.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 3)
    result.track, result.silenced, result.looked_at = answer.track, answer.silenced, answer.looked_at
    if cache_key:
        # A cached answer is kept opened, as it was answered: a later hit must not depend
        # on the data key still opening what it quotes.
        for item in result.items:
            if isinstance(item.row, channels.CandidateRow):
                item.row.open_all()
        cache.set(cache_key, result, timeout=settings.SAM_RECALL["CACHE_SECONDS"])
    return result


def _ranked(scope: Scope, request: RecallRequest, profile: scoring.Profile, query_text: str,
            now: datetime, timer: _Timer, slugs: list[str], *, actor: Actor) -> RecallResult:
    scored = candidates_with_signals(scope, request, query_text, now, timer)
    for item in scored:
        item.score = scoring.composite(item.signals, profile.weights)
    scored.sort(key=lambda item: (-round(item.score, 6), item.id))
    passing = [item for item in scored if scoring.passes(item.signals, item.score, profile.thresholds)]
    top = timer.stage("dedupe", lambda: _dedupe_and_diversify(passing, keep=max(request.k * 3, 15)))
    items, trimmed = _budget(top[: request.k], request.token_budget)
    timer.stage("explain", lambda: _explain(items, profile, request.context, query_text))
    follow_ups = _follow_ups(items, request)
    summaries = (timer.stage("categories", lambda: _category_summaries(actor, scope, passing[:20]))
                 if request.tiered
                 else [])
    return RecallResult(query_text, profile, items, follow_ups, not items, timer.timings, slugs,
                        candidates=len(scored), trimmed=trimmed, category_summaries=summaries)


TIERED_CATEGORIES = 3


def _category_summaries(actor: Actor, scope: Scope, items: list[RankedItem]) -> list[dict[str, Any]]:
    """The categories of the strongest passing items, by the sum of their scores × how well
    they fit, with their summaries as `actor` may read them (memories.categories.services): the broad
    answer before the items. A summary keeps only the lines of memories the recall itself
    could return (its spaces, filters and modes): a summary must not get around a filter."""
    links = MemoryCategory.objects.filter(memory_id__in=[i.id for i in items]).select_related("category")
    score = {item.id: item.score for item in items}
    weight: dict[int, float] = {}
    members: dict[int, list[str]] = {}
    categories: dict[int, Category] = {}
    for link in links:
        weight[link.category_id] = weight.get(link.category_id, 0.0) + score[link.memory_id] * link.relevance
        members.setdefault(link.category_id, []).append(link.memory_id)
        categories[link.category_id] = link.category
    ranked = sorted(weight, key=lambda pk: (-round(weight[pk], 6), categories[pk].name))[:TIERED_CATEGORIES]
    spaces = [categories[pk].space_id for pk in ranked]
    slugs = dict(Space.objects.filter(pk__in=spaces).values_list("pk", "slug"))
    all_lines = {pk: category_summary_lines(actor, categories[pk]) for pk in ranked}
    quoted = sorted({memory_id for lines in all_lines.values() for memory_id, _ in lines})
    returnable = set(channels.within_scope(scope, quoted))
    summaries: list[dict[str, Any]] = []
    for pk in ranked:
        lines = [(memory_id, line) for memory_id, line in all_lines[pk] if memory_id in returnable]
        summaries.append({
            "space": slugs[categories[pk].space_id], "name": categories[pk].name,
            "display_name": categories[pk].display_name, "summary": "\n".join(line for _, line in lines),
            # Which memory each line stands for (a pack leaves out lines of what it shows whole).
            "lines": [{"id": memory_id, "line": line} for memory_id, line in lines],
            "items": sorted(members[pk], key=lambda mid: (-score[mid], mid)),
        })
    return summaries


def candidates_with_signals(scope: Scope, request: RecallRequest, query_text: str, now: datetime,
                            timer: _Timer | None = None) -> list[RankedItem]:
    """Every channel's candidates with their signals, unscored (the part weights do not change)."""
    timer = timer or _Timer()
    config = settings.SAM_RECALL
    context = request.context
    # "What did Andrew do on the Monday before July 24, 2023?": the day goes to the time
    # channel and signal; its words match no memory, so they leave the matched text.
    frame = timeframe.find(context.query or query_text, now=now)
    if frame is None:
        # "The week after Amara's birthday party": the party's day is the memory's that tells of it.
        event = timeframe.find_event(context.query or query_text)
        if event is not None:
            frame = timer.stage("event", lambda: _event_frame(scope, event))
    query_text = timeframe.without(query_text, frame) or query_text
    vector = channels.vector_literal(timer.stage("embed", lambda: embed_query(query_text)))
    grams = channels.phrase_ngrams(query_text, context.active_task)
    context_tags = sorted(set(context.ui_tags) | set(request.filters.tags))

    # On the replica when this request reads from it: SET LOCAL needs a transaction (its
    # own, or the request's: no savepoint, as SET LOCAL outlives a released one anyway).
    with transaction.atomic(using=read_alias(), savepoint=False):
        lexemes = timer.stage("lexemes", lambda: channels.query_lexemes(query_text))
        plan = timer.stage("lexical_plan", lambda: channels.plan_lexical(scope, lexemes))
        candidate_ids: dict[str, None] = {}
        for name, fetch in (
            ("vector", lambda: channels.vector_candidates(scope, vector, config["VECTOR_CANDIDATES"])),
            ("passages", lambda: channels.passage_candidates(scope, vector, config["PASSAGE_CANDIDATES"])),
            ("lexical", lambda: channels.lexical_candidates(scope, plan, config["LEXICAL_CANDIDATES"])),
            ("exact", lambda: channels.exact_candidates(scope, grams, config["EXACT_CANDIDATES"])),
            ("tags", lambda: channels.tag_candidates(scope, context_tags, config["TAG_CANDIDATES"])),
            ("recent", lambda: channels.recent_candidates(scope, config["RECENT_CANDIDATES"])),
            ("time", lambda: [] if frame is None else channels.time_candidates(
                scope, frame.start, frame.end, vector, config["TIME_CANDIDATES"])),
        ):
            for memory_id in timer.stage(f"channel_{name}", fetch):
                candidate_ids.setdefault(memory_id, None)
        rows = timer.stage("signals", lambda: _with_lexical(channels.candidate_rows(
            list(candidate_ids), vector=vector, tokens=plan.tokens), plan))
        links = timer.stage("graph", lambda: _graph_links(scope, rows, query_text))
        linked = [memory_id for memory_id in links if memory_id not in candidate_ids]
        if linked:
            rows += _with_lexical(channels.candidate_rows(linked, vector=vector, tokens=plan.tokens), plan)

    def signals_of_all() -> list[RankedItem]:
        query_words = set(channels.phrase_ngrams(query_text, max_words=1))
        items = []
        for row in rows:
            strength, link = links.get(row["id"], (0.0, ""))
            signals = _signals(row, query_text=query_text, task=context.active_task,
                               context_tags=context_tags, query_words=query_words, now=now, frame=frame,
                               lexical=row["lexical"])
            items.append(RankedItem(row, replace(signals, graph=strength), 0.0, link=link))
        return items

    return timer.stage("score", signals_of_all)


GRAPH_SEEDS = 5
GRAPH_MIN_STRENGTH = 0.3
GRAPH_CANDIDATES = 30
# Entity hops (memories.entities.linking): a quarter of an edge someone made (.5 cost the project
# benchmark's development half .011 nDCG, .25 .004, for most of the multi-hop gain; see
# docs/benchmarks.md); only through names few memories share; so many memories per name.
ENTITY_HOP_STRENGTH = 0.25
ENTITY_MAX_MENTIONS = 50
ENTITY_PER_NAME = 10


EVENT_CANDIDATES = 20
# How well the best memory must match the event's words to anchor the window (closeness and
# keywords, as the graph's seeds are read): below it, the question names no known event.
EVENT_MIN_STRENGTH = 0.35


def _event_frame(scope: Scope, event: timeframe.EventAnchor) -> timeframe.TimeFrame | None:
    """The window of an event-anchored question, from the day of the memory that best tells of
    the event, or None when no memory does."""
    vector = channels.vector_literal(embed_query(event.event))
    plan = channels.plan_lexical(scope, channels.query_lexemes(event.event))
    ids = dict.fromkeys([*channels.vector_candidates(scope, vector, EVENT_CANDIDATES),
                         *channels.lexical_candidates(scope, plan, EVENT_CANDIDATES)])
    rows = _with_lexical(channels.candidate_rows(list(ids), vector=vector, tokens=plan.tokens), plan)
    if not rows:
        return None
    best = max(rows, key=lambda row: (round(_strength(row), 6), row["id"]))
    if _strength(best) < EVENT_MIN_STRENGTH:
        return None
    return event.window((best["occurred_at"] or best["created_at"]).date())


def closeness(row: dict[str, Any]) -> float:
    """A long memory is as close as its whole text or its closest window (memories.embeddings.passages)."""
    return max(float(row["cosine"] or 0.0), float(row["passage_cosine"] or 0.0))


def _strength(row: dict[str, Any]) -> float:
    """How strongly a candidate matches, without weights: closeness and keywords."""
    return 0.7 * max(0.0, closeness(row)) + 0.3 * row["lexical"]


def _with_lexical(rows: list[dict[str, Any]], plan: channels.LexicalPlan) -> list[dict[str, Any]]:
    """Each row with its lexical signal, computed once (the graph's seeds and scoring read it)."""
    for row in rows:
        row["lexical"] = channels.lexical_signal(row["matched_lexemes"], plan, length=row["lexeme_count"])
    return rows


def _graph_links(scope: Scope, rows: list[dict[str, Any]], query_text: str) -> dict[str, tuple[float, str]]:
    """Memories linked to the strongest candidates, by an edge or a name they share, with
    their graph signal and the link.

    The strongest are read off the weight-free part of the score (closeness and keywords),
    so the graph does not depend on the profile. A neighbour's signal is the edge's strength
    (ENTITY_HOP_STRENGTH for a shared name) times its seed's strength against the best seed's.
    """
    seeds = sorted(rows, key=lambda row: (-_strength(row), row["id"]))[:GRAPH_SEEDS]
    best = _strength(seeds[0]) if seeds else 0.0
    seeds = [row for row in seeds if best and _strength(row) >= best / 2]
    if not seeds:
        return {}
    by_id = {row["id"]: row for row in seeds}
    found = [(n.memory_id, n.origin, n.strength, f"by {n.relation}") for n in
             graph.neighbours(list(by_id), min_strength=GRAPH_MIN_STRENGTH, limit=GRAPH_CANDIDATES)]
    hops = entity_hops.hops(list(by_id), space_ids={row["space_id"] for row in seeds}, question=query_text,
                            max_mentions=ENTITY_MAX_MENTIONS, per_entity=ENTITY_PER_NAME)
    found += [(hop.memory_id, hop.via, ENTITY_HOP_STRENGTH, f"through {hop.name}") for hop in hops]
    # The seeds are candidates, within scope already. (Asked even for none, so a recall's
    # queries do not depend on what the graph finds.)
    visible = set(by_id) | set(channels.within_scope(scope, sorted({m for m, *_ in found} - set(by_id)),
                                                     always=True))
    links: dict[str, tuple[float, str]] = {}
    for memory_id, origin, edge_strength, how in found:
        if memory_id not in visible:
            continue
        seed = by_id[origin]
        signal = round(edge_strength * _strength(seed) / best, 6)
        if signal > links.get(memory_id, (0.0, ""))[0]:
            title = seed["title"] if len(seed["title"]) <= 60 else seed["title"][:59] + "…"
            links[memory_id] = (signal, f"linked to “{title}” {how}")
    return links


def _signals(row: dict[str, Any], *, query_text: str, task: str, context_tags: list[str],
             query_words: set[str], now: datetime, lexical: float = 0.0,
             frame: timeframe.TimeFrame | None = None) -> scoring.Signals:
    window = float(settings.SAM_RECALL["RECENCY_WINDOW_DAYS"])
    hits = explain.phrase_hits(f"{query_text} {task}".lower(), row["canonical_phrases"])
    memory_tags = set(row["tags"])
    if context_tags:
        tag_signal = len(memory_tags & set(context_tags)) / len(context_tags)
    else:
        tag_signal = min(1.0, len(memory_tags & query_words) / 2)
    last_used = row["last_used_at"] or row["updated_at"]
    confidence = scoring.effective_confidence(row, now=now)
    # A near-empty memory ("Talk soon, Amara!") is close to every question naming Amara and
    # says nothing: closeness and keywords count in proportion to what it says.
    said = scoring.substance(row["lexeme_count"], int(settings.SAM_RECALL["SHORT_TEXT_LEXEMES"]))
    return scoring.Signals(
        semantic=max(0.0, min(1.0, closeness(row) * said)),
        lexical=lexical * said,
        exact=scoring.exact_signal(len(hits), len(row["canonical_phrases"])),
        tags=tag_signal,
        recency=scoring.recency_signal(scoring.days_between(now, last_used), window),
        confidence=confidence,
        importance=float(row["importance"]),
        access=scoring.access_signal(scoring.days_between(now, row["last_accessed_at"])),
        time=0.0 if frame is None else scoring.time_signal(row["occurred_at"] or row["created_at"],
                                                           frame.start, frame.end),
    )


def _dedupe_and_diversify(items: list[RankedItem], *, keep: int) -> list[RankedItem]:
    """Near-duplicates (cosine > .95) keep the more confident one; close cousins
    (cosine > .90) move below the next distinct item so the top of the list varies."""
    config = settings.SAM_RECALL
    head = items[:keep]
    sims = channels.pairwise_cosines([item.id for item in head])

    def sim(a: str, b: str) -> float:
        return sims.get((a, b) if a < b else (b, a), 0.0)

    kept: list[RankedItem] = []
    for item in head:
        twin = next((k for k in kept if sim(k.id, item.id) > config["DEDUPE_COSINE"]
                     or k.row["content_hash"] == item.row["content_hash"]), None)
        if twin is None:
            kept.append(item)
        elif item.row["confidence"] > twin.row["confidence"]:
            kept[kept.index(twin)] = item
    distinct: list[RankedItem] = []
    deferred: list[RankedItem] = []
    for item in kept:
        if any(sim(d.id, item.id) > config["DIVERSITY_COSINE"] for d in distinct):
            deferred.append(item)
        else:
            distinct.append(item)
    return distinct + deferred + items[keep:]


def _budget(items: list[RankedItem], budget: int | None) -> tuple[list[RankedItem], int]:
    """Keep whole items, best first, while their title + summary fit the token budget."""
    counts = count_many([f"{i.row['title']}\n{i.row['summary']}" for i in items])
    for item, count in zip(items, counts, strict=True):
        item.tokens = count
    if not budget:
        return items, 0
    kept, used = [], 0
    for item in items:
        if used + item.tokens > budget:
            continue
        kept.append(item)
        used += item.tokens
    return kept, len(items) - len(kept)


def _explain(items: list[RankedItem], profile: scoring.Profile, context: RecallContext,
             query_text: str) -> None:
    cue = contextual_cue(context)
    conflicts = explain.find_conflicts([(i.id, i.row["tags"], i.row["canonical_phrases"]) for i in items])
    by_id: dict[str, dict[str, Any]] = {}
    for conflict in conflicts:
        for mine, other in ((conflict.a, conflict.b), (conflict.b, conflict.a)):
            by_id.setdefault(mine, {"with": other, "shared_tags": list(conflict.shared_tags),
                                    "subject": list(conflict.subject)})
    for item in items:
        item.conflict = by_id.get(item.id)
        item.rationale = explain.rationale(item.signals, profile.weights, cue=cue,
                                           conflict=item.conflict is not None,
                                           link=item.link if item.signals.graph else "")
        item.highlights = explain.highlights(query_text, phrases=item.row["canonical_phrases"],
                                             content=item.row["content"])


def _follow_ups(items: list[RankedItem], request: RecallRequest) -> list[dict]:
    actions = []
    if not items:
        actions.append({
            "type": "create_new_memory_prefill",
            "label": "Nothing relevant is stored yet: save this as a new memory?",
            "payload": explain.new_memory_prefill(
                conversation=request.context.conversation, active_task=request.context.active_task,
                query=request.context.query,
            ),
        })
    seen: set[tuple[str, str]] = set()
    for item in items:
        if item.conflict:
            pair = tuple(sorted((item.id, item.conflict["with"])))
            if pair in seen:
                continue
            seen.add(pair)
            actions.append({
                "type": "clarify_conflict",
                "label": f"These memories disagree about {', '.join(item.conflict['subject'])}: "
                         "which one holds?",
                "payload": {"memory_ids": list(pair), "shared_tags": item.conflict["shared_tags"],
                            "subject": item.conflict["subject"]},
            })
    return actions


def _listing(scope: Scope, request: RecallRequest, profile: scoring.Profile, query_text: str,
             now: datetime, timer: _Timer, slugs: list[str]) -> RecallResult:
    """recent, timeline and tag-only topic queries: ordered listings, no similarity."""
    where, params = scope.where()
    if request.query_type == "timeline":
        order = "COALESCE(m.occurred_at, m.created_at) ASC, m.id"
    else:
        order = "COALESCE(s.last_used_at, s.last_accessed_at, m.updated_at) DESC, m.id"
    with reading_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id FROM {MEMORY} m JOIN {MEMORY_STATS} s ON s.memory_id = m.id "
            f"WHERE {where} ORDER BY {order} LIMIT %s", [*params, request.k])
        ids = [row[0] for row in cursor.fetchall()]
    rows = {r["id"]: r for r in channels.candidate_rows(ids, vector=None, tokens={})}
    items = []
    for memory_id in ids:
        row = rows[memory_id]
        signals = _signals(row, query_text=query_text, task=request.context.active_task,
                           context_tags=sorted(scope.tags), query_words=set(), now=now)
        items.append(RankedItem(row, signals, scoring.composite(signals, profile.weights)))
    items, trimmed = _budget(items, request.token_budget)
    for item in items:
        when = item.row["occurred_at"] or item.row["created_at"]
        if request.query_type == "timeline":
            item.rationale = f"In the requested time range, from {when:%Y-%m-%d}."
        elif request.query_type == "topic":
            item.rationale = f"Tagged {request.topic}, among the most recently used on that topic."
        else:
            last = item.row["last_used_at"] or item.row["last_accessed_at"] or item.row["updated_at"]
            item.rationale = f"Among the most recently used memories (last {last:%Y-%m-%d})."
    return RecallResult(query_text, profile, items, [], not items, timer.timings, slugs,
                        candidates=len(ids), trimmed=trimmed)
