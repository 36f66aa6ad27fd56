"""Candidate channels and the signal query: parameterised SQL over memories.

Each channel over-fetches a bounded number of ids; the union is scored in one query.
The hot path uses raw SQL because the ORM's per-row cost on the wide memory row would
dominate the latency budget, and because the lexical and vector operators are easier to
read in SQL. Every value goes in as a parameter.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from core.models import Space
from core.replica import read_alias, reading_connection
from core.text import SEARCH_CONFIG
from governance.access import Visibility
from governance.crypto import cipher, search
from memories.models import Memory, MemoryPassage, MemoryStats
from retrieval.models import LexemeStat, SpaceTextStats

# The tables the SQL below reads, named by their models (memories owns them).
MEMORY = Memory._meta.db_table
MEMORY_STATS = MemoryStats._meta.db_table
PASSAGE = MemoryPassage._meta.db_table
SPACE = Space._meta.db_table
LEXEME_STAT = LexemeStat._meta.db_table
# ts_rank_cd weights for D, C, B, A: content C, tags and summary B, title and phrases A.
RANK_WEIGHTS = "{0.1, 0.3, 0.6, 1.0}"
_WORD = re.compile(r"[a-z0-9][a-z0-9+#._/-]*")
# The advisory lock class of lexeme recounts (the key is the space id).
LEXEME_LOCK = 7031


@dataclass(frozen=True)
class Filters:
    """What a recall request narrows memories by (all optional)."""

    memory_type: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    reliability: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    include_archived: bool = False

    @property
    def narrows(self) -> bool:
        """True when a filter beyond spaces and access rules narrows the rows (archived ones widen)."""
        return bool(self.memory_type or self.kind or self.tags or self.reliability
                    or self.after or self.before)

    @property
    def indexed(self) -> bool:
        """True when an index finds the filtered rows: the tag GIN or the (space, said at) index."""
        return bool(self.tags or self.after or self.before)


@dataclass(frozen=True)
class Scope:
    """Where a recall may look: visible spaces plus the request's filters."""

    space_ids: tuple[int, ...]
    filters: Filters = field(default_factory=Filters)
    # Per-memory rules (restricted memories and tags) from the access gateway.
    visibility: Visibility | None = None

    @property
    def tags(self) -> tuple[str, ...]:
        return self.filters.tags

    def where(self, alias: str = "m") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        # The visibility groups already name the spaces in scope; repeating the space test
        # makes the planner count its selectivity twice and, for a small space in a large
        # table, pick an exact scan over the HNSW index (24 ms against 4 ms at 10k of 111k).
        # Memories granted one by one may lie outside the scope, so then it stays.
        if self.visibility is None or self.visibility.granted:
            clauses.append(f"{alias}.space_id = ANY(%s)")
            params.append(list(self.space_ids))
        if self.visibility is not None:
            visible, visible_params = self.visibility.sql(alias)
            clauses.append(visible)
            params += visible_params
        f = self.filters
        if not f.include_archived:
            clauses.append(f"NOT {alias}.archived")
        if f.memory_type:
            clauses.append(f"{alias}.memory_type = %s")
            params.append(f.memory_type)
        if f.kind:
            clauses.append(f"{alias}.kind = %s")
            params.append(f.kind)
        if f.tags:
            clauses.append(f"{alias}.tags @> %s::varchar[]")
            params.append(list(f.tags))
        if f.reliability:
            clauses.append(f"{alias}.reliability = %s")
            params.append(f.reliability)
        if f.after:
            clauses.append(f"COALESCE({alias}.occurred_at, {alias}.created_at) >= %s")
            params.append(f.after)
        if f.before:
            clauses.append(f"COALESCE({alias}.occurred_at, {alias}.created_at) < %s")
            params.append(f.before)
        return " AND ".join(clauses), params


def vector_literal(vector) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def _ids(sql: str, params: list[Any]) -> list[str]:
    with reading_connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class VectorPlan:
    """How the vector channel ranked one query.

    path: "index" (no filter narrows the scope: the HNSW index, as the planner picks),
    "exact" (every row of a small filtered set ranked by distance), or "iterative" (an
    iterative HNSW scan that keeps walking until enough rows pass the filter).
    estimated_rows: the planner's estimate of the filtered set (None on the "index" path).
    filtered_rows: the rows the exact path counted (None when it did not run, or when it
    found more than the cap and handed over to the iterative scan).
    """

    path: str
    estimated_rows: int | None = None
    filtered_rows: int | None = None


def vector_candidates(scope: Scope, vector: str, limit: int) -> list[str]:
    """Nearest neighbours by cosine distance, nearest first (ties by id)."""
    return vector_search(scope, vector, limit)[0]


def vector_search(scope: Scope, vector: str, limit: int) -> tuple[list[str], VectorPlan]:
    """The vector channel's ids and how it found them.

    Unfiltered (only spaces and access rules): the HNSW index, as before; the planner
    already ranks a small space exactly. Under a filter the index alone returns ef_search
    candidates of which most fail a selective filter. Memory type, kind or reliability
    alone: an iterative scan. Tags or a time range, which an index finds, are planned: the
    planner's estimate of the filtered set
    (statistics only, no rows read) picks an exact ranking of those rows when it is small
    (at most VECTOR_EXACT_MAX_ROWS), else an iterative index scan. Either path falls over
    to the other when the estimate was wrong: the exact path stops counting past the cap,
    and an iterative scan that comes back short (the walk hit hnsw.max_scan_tuples before
    `limit` rows passed) means the filtered set is small enough to rank exactly.
    """
    # The settings hold for the surrounding transaction; a caller without one gets its own
    # here (no savepoint inside one: nothing to roll back).
    with transaction.atomic(using=read_alias(), savepoint=False):
        return _vector_search(scope, vector, limit)


def _vector_search(scope: Scope, vector: str, limit: int) -> tuple[list[str], VectorPlan]:
    config = settings.SAM_RECALL
    use_hnsw_settings(limit)
    if not scope.filters.narrows:
        where, params = scope.where()
        return _ids(
            f"SELECT m.id FROM {MEMORY} m WHERE {where} AND m.embedding IS NOT NULL "
            "ORDER BY m.embedding <=> %s::vector LIMIT %s",
            [*params, vector, limit],
        ), VectorPlan(path="index")
    if not scope.filters.indexed:
        # Memory type, kind or reliability alone: no index finds those rows, so ranking them
        # exactly would read every row of the spaces. The iterative
        # scan answers, or the planner's own exact plan for a small space, as before.
        return iterative_vector_candidates(scope, vector, limit), VectorPlan(path="iterative")
    cap = int(config["VECTOR_EXACT_MAX_ROWS"])
    estimate = filtered_rows_estimate(scope)
    if estimate <= cap:
        found, counted = exact_vector_candidates(scope, vector, limit, cap=cap)
        if counted <= cap:
            return found, VectorPlan(path="exact", estimated_rows=estimate, filtered_rows=counted)
    found = iterative_vector_candidates(scope, vector, limit)
    if len(found) < limit and estimate > cap:
        exact, counted = exact_vector_candidates(scope, vector, limit, cap=cap)
        if counted <= cap:
            return exact, VectorPlan(path="exact", estimated_rows=estimate, filtered_rows=counted)
    return found, VectorPlan(path="iterative", estimated_rows=estimate)


def use_hnsw_settings(limit: int) -> None:
    """ef_search, relaxed_order iterative scans and the scan cap for the rest of the transaction.

    SET LOCAL lasts until the end of the surrounding transaction (the caller's atomic); the
    passage channel runs after the vector channel under the same settings.
    """
    config = settings.SAM_RECALL
    ef_search = max(limit, int(config["HNSW_EF_SEARCH"]))
    with reading_connection.cursor() as cursor:
        # One round trip for the three.
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', %s, true)",
            [str(ef_search), str(int(config["HNSW_MAX_SCAN_TUPLES"]))],
        )


def filtered_rows_estimate(scope: Scope) -> int:
    """The planner's estimate of the rows with a vector the scope lets through.

    From the table's statistics (most common tags and values, histograms), so it costs a
    plan, not a scan (well under a millisecond). It assumes the filters independent: a tag
    common elsewhere but rare in the scope's spaces is overestimated, which the short
    iterative scan catches (vector_search).
    """
    where, params = scope.where()
    with reading_connection.cursor() as cursor:
        cursor.execute(
            f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {MEMORY} m WHERE {where} AND m.embedding IS NOT NULL",
            params,
        )
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])


def exact_vector_candidates(scope: Scope, vector: str, limit: int, *, cap: int) -> tuple[list[str], int]:
    """The exact nearest `limit` of the scope's rows, and how many rows it counted.

    The inner query reads at most cap + 1 filtered rows through the filter's indexes (the
    tag GIN, the said-at index) and has no ORDER BY on distance, so the HNSW index cannot
    serve it; the outer sort ranks them all. More than `cap` rows: ([], cap + 1), for the
    caller to use the index instead.
    """
    where, params = scope.where()
    with reading_connection.cursor() as cursor:
        cursor.execute(
            "SELECT f.id, f.counted FROM ("
            "SELECT r.id, r.embedding <=> %s::vector AS distance, count(*) OVER () AS counted FROM ("
            f"SELECT m.id, m.embedding FROM {MEMORY} m WHERE {where} AND m.embedding IS NOT NULL "
            "LIMIT %s) r) f ORDER BY f.distance, f.id LIMIT %s",
            [vector, *params, cap + 1, limit],
        )
        rows = cursor.fetchall()
    counted = int(rows[0][1]) if rows else 0
    if counted > cap:
        return [], counted
    return [row[0] for row in rows], counted


def iterative_vector_candidates(scope: Scope, vector: str, limit: int) -> list[str]:
    """The nearest `limit` rows through an iterative HNSW scan, re-sorted by exact distance.

    Needs use_hnsw_settings in the same transaction. relaxed_order lets the walk hand back
    rows slightly out of order; the materialised CTE keeps the index scan inside it, and the
    outer sort by distance then id makes the order exact and the same on every run over the
    same index.
    """
    where, params = scope.where()
    return _ids(
        f"WITH near AS MATERIALIZED (SELECT m.id, m.embedding <=> %s::vector AS distance FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL ORDER BY m.embedding <=> %s::vector LIMIT %s) "
        "SELECT id FROM near ORDER BY distance, id",
        [vector, *params, vector, limit],
    )


def passage_candidates(scope: Scope, vector: str, limit: int) -> list[str]:
    """Long memories whose best window of content is nearest the query (memories.embeddings.passages).

    Run after vector_candidates in the same transaction, so its ef_search and iterative scan
    settings hold. The nearest windows of the scope's spaces come first (through the HNSW
    index), then the memory rules filter them.
    """
    where, params = scope.where()
    return _ids(
        f"WITH near AS MATERIALIZED (SELECT p.memory_id, p.embedding <=> %s::vector AS distance "
        f"FROM {PASSAGE} p WHERE p.space_id = ANY(%s) ORDER BY p.embedding <=> %s::vector LIMIT %s) "
        f"SELECT m.id FROM near JOIN {MEMORY} m ON m.id = near.memory_id WHERE {where} "
        "GROUP BY m.id ORDER BY min(near.distance), m.id LIMIT %s",
        [vector, list(scope.space_ids), vector, limit * 4, *params, limit],
    )


def query_lexemes(text: str) -> list[str]:
    """The stemmed lexemes Postgres would index for `text`, in first-seen order."""
    if not text.strip():
        return []
    with reading_connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY positions[1]",
            [SEARCH_CONFIG, text],
        )
        return [row[0] for row in cursor.fetchall()]


def token_array(tokens: list[str]) -> str:
    """Keyed tokens as one array literal, cast by the query (`%s::varchar[]`).

    Tokens are hex, so they need no quoting; one text parameter instead of a list saves
    adapting tens of thousands of values one by one (about half a second over a thousand
    spaces).
    """
    if any(not token.isalnum() for token in tokens):
        raise ValueError("Keyed tokens are hex.")
    return "{" + ",".join(tokens) + "}"


def tsquery_text(lexemes: list[str]) -> str:
    """An OR tsquery of keyed tokens, quoted to be cast as written (`%s::tsquery`; see
    governance.crypto.search.TokenQuery for why not to_tsquery)."""
    quoted = ["'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes]
    return " | ".join(quoted)


@dataclass
class LexicalPlan:
    all_lexemes: list[str] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)
    estimated_rows: int = 0
    document_counts: dict[str, int] = field(default_factory=dict)
    documents: int = 0
    # Distinct lexemes per memory on average (BM25's average document length).
    average_length: float = 0.0
    # Keyed token -> lexeme, for every live key of every space in scope.
    tokens: dict[str, str] = field(default_factory=dict)
    # The same, space by space: a space's rows hold only its own keys' tokens.
    space_tokens: dict[int, dict[str, str]] = field(default_factory=dict)

    def tokens_of(self, lexemes: list[str]) -> list[str]:
        wanted = set(lexemes)
        return sorted(token for token, lexeme in self.tokens.items() if lexeme in wanted)

    def queries_by_space(self, lexemes: list[str]) -> tuple[list[int], list[str]]:
        """(space ids, the tsquery text of each space's tokens of `lexemes`), spaces in id order."""
        wanted = set(lexemes)
        space_ids, queries = [], []
        for space_id in sorted(self.space_tokens):
            tokens = sorted(t for t, lexeme in self.space_tokens[space_id].items() if lexeme in wanted)
            if tokens:
                space_ids.append(space_id)
                queries.append(tsquery_text(tokens))
        return space_ids, queries

    def idf(self, lexeme: str) -> float:
        """BM25's inverse document frequency; lexemes newer than the statistics count as rare."""
        n = max(self.documents, 1)
        df = min(self.document_counts.get(lexeme, 0), n)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    @cached_property
    def query_idf(self) -> float:
        """What the query's lexemes could score at most (lexical_signal's divisor): the same for
        every candidate, so summed once. Read only once the plan is complete (plan_lexical)."""
        return sum(self.idf(lexeme) for lexeme in self.all_lexemes)


def plan_lexical(scope: Scope, lexemes: list[str]) -> LexicalPlan:
    """Pick the rarest lexemes whose document counts fit the row budget.

    Lexemes missing from the statistics (new since the last refresh) count as rare.
    """
    plan = LexicalPlan(all_lexemes=lexemes)
    if not lexemes:
        return plan
    plan.space_tokens = search.query_tokens_by_space(scope.space_ids, lexemes)
    plan.tokens = {token: lexeme for tokens in plan.space_tokens.values() for token, lexeme in tokens.items()}
    counts: dict[str, int] = {}
    # Each space's own tokens, looked up by (space, token) pairs through the unique index
    # (every token against every space, an IN list of ten thousand over a thousand spaces,
    # took 1.5 s), and the spaces' sizes in the same round trip: a NULL token marks a
    # space's (documents, average length) row.
    pairs = sorted((space_id, token) for space_id, tokens in plan.space_tokens.items() for token in tokens)
    with reading_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT st.lexeme, st.ndoc, NULL::float8 FROM unnest(%s::bigint[], %s::text[]) "
            f"AS q(space_id, lexeme) JOIN {LEXEME_STAT} st "
            "ON st.space_id = q.space_id AND st.lexeme = q.lexeme "
            f"UNION ALL SELECT NULL, documents, average_length FROM {SpaceTextStats._meta.db_table} "
            "WHERE space_id = ANY(%s)",
            [[space_id for space_id, _ in pairs], token_array([token for _, token in pairs]),
             list(scope.space_ids)])
        fetched = cursor.fetchall()
    stats: list[tuple[int, float]] = []
    for token, number, average_length in fetched:
        if token is None:
            stats.append((number, average_length))
            continue
        lexeme = plan.tokens[token]
        counts[lexeme] = counts.get(lexeme, 0) + number
    plan.document_counts = counts
    plan.documents = sum(documents for documents, _ in stats)
    if plan.documents:
        plan.average_length = sum(documents * length for documents, length in stats) / plan.documents
    budget = int(settings.SAM_RECALL["LEXICAL_ROW_BUDGET"])
    max_terms = int(settings.SAM_RECALL["LEXICAL_MAX_TERMS"])
    order = {lexeme: index for index, lexeme in enumerate(lexemes)}
    for lexeme in sorted(lexemes, key=lambda lx: (counts.get(lx, 0), order[lx])):
        ndoc = counts.get(lexeme, 0)
        if plan.chosen and (plan.estimated_rows + ndoc > budget or len(plan.chosen) >= max_terms):
            break
        plan.chosen.append(lexeme)
        plan.estimated_rows += ndoc
    return plan


def lexical_candidates(scope: Scope, plan: LexicalPlan, limit: int) -> list[str]:
    """The memories holding the plan's chosen lexemes, best ts_rank_cd first.

    Searched space by space, each space for its own keys' tokens, its best `limit` rows
    then merged: the same rows and order as one search for every space's tokens (a
    space's rows hold no other space's tokens, and an OR query's rank does not depend on
    the terms a row lacks), without testing every row against every space's tokens. That
    single search cost 2.8 s over 50 spaces of 100 memories on a loaded machine (the
    planner cannot estimate keyed tokens, so it scanned the table testing 200 tokens a
    row), against 48 ms space by space, each through the (token, space) indexes.
    """
    if not plan.chosen:
        return []
    if not plan.space_tokens:
        # A plan made by hand with tokens alone: every space looks for all of them.
        plan = replace(plan, space_tokens={space_id: plan.tokens for space_id in scope.space_ids})
    space_ids, queries = plan.queries_by_space(plan.chosen)
    if not space_ids:
        return []
    where, params = scope.where()
    return _ids(
        "SELECT hit.id FROM unnest(%s::bigint[], %s::text[]) AS sq(space_id, query) CROSS JOIN LATERAL ("
        f"SELECT m.id, ts_rank_cd('{RANK_WEIGHTS}', m.search_vector, q, 32) AS rank "
        f"FROM {MEMORY} m, CAST(sq.query AS tsquery) q "
        # `+ 0`: the space is matched row by row, not through the space index. The planner
        # cannot estimate a tsquery known only at run time, and ANDed the GIN hits with an
        # index scan of the whole space (5.5 of 7 ms in a space of 100k memories).
        f"WHERE m.space_id + 0 = sq.space_id AND {where} AND m.search_vector @@ q "
        "ORDER BY rank DESC, m.id LIMIT %s) AS hit "
        "ORDER BY hit.rank DESC, hit.id LIMIT %s",
        [space_ids, queries, *params, limit, limit],
    )


def phrase_ngrams(*texts: str, max_words: int = 8) -> list[str]:
    """Every run of 1..max_words words, lowercased, as canonical phrases are stored."""
    grams: set[str] = set()
    for text in texts:
        words = _WORD.findall(text.lower())
        for size in range(1, max_words + 1):
            for start in range(0, len(words) - size + 1):
                gram = " ".join(words[start:start + size])
                if len(gram) >= 3:
                    grams.add(gram)
    return sorted(grams)


# The exact-phrase channel's shared budget of keyed tokens (runs of query words × spaces),
# and how many go to one GIN search (see exact_candidates).
EXACT_TOKEN_BUDGET = 10_000
EXACT_TOKENS_PER_SEARCH = 1000
# Which runs of words are looked up first when the budget binds: canonical phrases are
# mostly two to four words; one word alone is what the lexical channel finds anyway.
EXACT_RUN_ORDER = (2, 3, 4, 5, 6, 7, 8, 1)


def exact_grams(grams: list[str], spaces: int) -> list[str]:
    """The runs of words the exact-phrase channel looks up in `spaces` spaces.

    Phrase tokens are keyed per space, so each space adds one token per run (about 70 for a
    12-word question): 70,000 over a thousand spaces, more than a recall can derive and look
    up in time. Whole lengths of runs are kept, in EXACT_RUN_ORDER, while the tokens fit
    EXACT_TOKEN_BUDGET (the first length always). Below the budget (a 12-word question in
    up to ~140 spaces) every run is kept, as before.
    """
    if len(grams) * spaces <= EXACT_TOKEN_BUDGET:
        return grams
    by_length: dict[int, list[str]] = {}
    for gram in grams:
        by_length.setdefault(len(gram.split(" ")), []).append(gram)
    kept: list[str] = []
    for length in EXACT_RUN_ORDER:
        runs = by_length.get(length, [])
        if kept and (len(kept) + len(runs)) * spaces > EXACT_TOKEN_BUDGET:
            break
        kept += runs
    return sorted(kept)


def exact_candidates(scope: Scope, grams: list[str], limit: int) -> list[str]:
    if not grams:
        return []
    where, params = scope.where()
    grams = exact_grams(grams, len(scope.space_ids))
    tokens = sorted(search.query_tokens(scope.space_ids, grams, phrase=True))
    # One GIN search's cost grows with the square of its tokens (it compares each new one
    # with those before it: 1,000 tokens 17 ms, 10,000 275 ms, 68,000 8.5 s, measured over
    # 1,000 spaces on a loaded machine), so they go in searches of EXACT_TOKENS_PER_SEARCH,
    # ORed (one bitmap of the index per search).
    chunks = [tokens[i:i + EXACT_TOKENS_PER_SEARCH] for i in range(0, len(tokens), EXACT_TOKENS_PER_SEARCH)]
    overlaps = " OR ".join(["phrase_tokens && %s::varchar[]"] * len(chunks))
    # Tokens are keyed per space, so the GIN lookup alone is selective; materialising it
    # keeps the planner from scanning a small space row by row instead (measured: 27 ms
    # for a 10k space in a 111k table, against under 1 ms through the index). The planner
    # cannot know that: with many spaces its statistics hold none of a space's tokens, and
    # it guessed 400,000 of a million rows for a question's hundred tokens and read the whole
    # table (2.6 s a recall, against 13 ms through the index), so the index is required.
    # No savepoint of its own: SET LOCAL outlives a released savepoint anyway, and the
    # setting is put back below; outside a transaction this still opens one.
    with transaction.atomic(using=read_alias(), savepoint=False), reading_connection.cursor() as cursor:
        # The old value is read in the row the new one is set from (OFFSET 0 keeps the
        # subquery apart, so it is read first).
        cursor.execute("SELECT before.value, set_config('enable_seqscan', 'off', true) FROM "
                       "(SELECT current_setting('enable_seqscan') AS value OFFSET 0) AS before")
        previous = cursor.fetchone()[0]
        cursor.execute(
            f"WITH hits AS MATERIALIZED (SELECT id FROM {MEMORY} WHERE {overlaps}) "
            f"SELECT m.id FROM {MEMORY} m JOIN hits ON hits.id = m.id WHERE {where} "
            "ORDER BY m.updated_at DESC, m.id LIMIT %s",
            [*(token_array(chunk) for chunk in chunks), *params, limit],
        )
        found = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT set_config('enable_seqscan', %s, true)", [previous])
    return found


def tag_candidates(scope: Scope, tags: list[str], limit: int) -> list[str]:
    if not tags:
        return []
    where, params = scope.where()
    return _ids(
        f"SELECT m.id FROM {MEMORY} m WHERE {where} AND m.tags && %s::varchar[] "
        "ORDER BY m.updated_at DESC, m.id LIMIT %s",
        [*params, tags, limit],
    )


def time_candidates(scope: Scope, start: datetime, end: datetime, vector: str, limit: int) -> list[str]:
    """Memories said within [start, end) (else written then), nearest the query first.

    A day or a month of a space is a few rows to a few thousand: the (space, said at)
    index finds them and they are ranked exactly, not through the vector index.
    """
    where, params = scope.where()
    return _ids(
        f"SELECT m.id FROM {MEMORY} m WHERE {where} "
        "AND COALESCE(m.occurred_at, m.created_at) >= %s AND COALESCE(m.occurred_at, m.created_at) < %s "
        "ORDER BY m.embedding <=> %s::vector NULLS LAST, m.id LIMIT %s",
        [*params, start, end, vector, limit],
    )


def within_scope(scope: Scope, ids: list[str], *, always: bool = False) -> list[str]:
    """Those of `ids` the scope may return (visible, in its spaces, through its filters).
    `always`: query even for no ids (a caller whose query count must not vary)."""
    if not ids and not always:
        return []
    where, params = scope.where()
    return _ids(f"SELECT m.id FROM {MEMORY} m WHERE {where} AND m.id = ANY(%s) ORDER BY m.id", [*params, ids])


def recent_candidates(scope: Scope, limit: int) -> list[str]:
    where, params = scope.where()
    # Space by space through the (space, last accessed, id) index, each stopping after its
    # first rows, then merged: not every recently recalled memory of every space (83 ms at
    # 10k once 33k others had been), nor all of a space's sorted (`= ANY` loses the order).
    return _ids(
        f"SELECT recent.id FROM unnest(%s::bigint[]) AS sp(id) CROSS JOIN LATERAL ("
        f"SELECT m.id, s.last_accessed_at FROM {MEMORY_STATS} s JOIN {MEMORY} m ON m.id = s.memory_id "
        f"WHERE s.space_id = sp.id AND s.last_accessed_at IS NOT NULL AND {where} "
        "ORDER BY s.last_accessed_at DESC, s.memory_id LIMIT %s) AS recent "
        "ORDER BY recent.last_accessed_at DESC, recent.id LIMIT %s",
        [list(scope.space_ids), *params, limit, limit],
    )


CANDIDATE_COLUMNS = (
    "id", "space_id", "space_slug", "title", "summary", "content", "canonical_phrases", "tags",
    "kind", "memory_type", "priority", "reliability", "importance", "decay_policy", "version",
    "source_type", "source_ref", "source_uri", "created_at", "updated_at", "occurred_at",
    "archived", "content_hash", "confidence", "last_used_at", "last_accessed_at",
    "access_count", "usage_count", "decayed_at", "cosine", "matched_lexemes", "lexeme_count",
    "passage_cosine",
)


SEALED_COLUMNS = {"title": "text", "summary": "text", "content": "text", "canonical_phrases": "json",
                  "source_ref": "text", "source_uri": "text"}


class CandidateRow(dict[str, Any]):
    """A candidate's columns, its sealed text opened on first read.

    A recall scores a hundred or more candidates and shows five: scoring reads the sealed
    canonical phrases of each (the exact signal), but titles, summaries, contents and
    sources only of the few that make the cut (the graph's seeds, the items returned, a
    pack's). Opening each value when it is first read gives every reader the value an
    opening of all of them would have, so scores and ranks do not change; the candidates
    nobody reads are never decrypted.

    A dict whose sealed columns are missing until read (`__missing__` opens one and keeps
    it), so reading an open column costs what a dict read costs: scoring reads some forty
    per candidate. Whatever looks at the whole row (iteration, items, copies, equality,
    pickling) opens every column first.
    """

    __slots__ = ("_sealed",)

    def __init__(self, values: dict[str, Any], sealed: dict[str, bytes | None]) -> None:
        super().__init__(values)
        self._sealed = sealed

    def __missing__(self, key: str) -> Any:
        blob = self._sealed.pop(key)  # KeyError for a column the row does not have
        opener = cipher.open_json if SEALED_COLUMNS[key] == "json" else cipher.open_text
        value = opener(blob, context=f"{MEMORY}.{key}")
        dict.__setitem__(self, key, value)
        return value

    def open_all(self) -> CandidateRow:
        """Open what is still sealed (before the row is looked at whole or kept)."""
        for key in list(self._sealed):
            self[key]
        return self

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._sealed else dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._sealed

    def __setitem__(self, key: str, value: Any) -> None:
        self._sealed.pop(key, None)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        if self._sealed.pop(key, _MISSING) is _MISSING:
            dict.__delitem__(self, key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self._sealed:
            self[key]
        return dict.pop(self, key, *default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self._sealed:
            return self[key]
        return dict.setdefault(self, key, default)

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self.open_all())

    def __len__(self) -> int:
        return dict.__len__(self) + len(self._sealed)

    def keys(self):
        return dict.keys(self.open_all())

    def items(self):
        return dict.items(self.open_all())

    def values(self):
        return dict.values(self.open_all())

    def copy(self) -> dict[str, Any]:
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CandidateRow):
            other.open_all()
        return dict.__eq__(self.open_all(), other)

    def __ne__(self, other: object) -> bool:
        return not self == other


    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as it is, sealed values still sealed (the cache keeps answers opened: pipeline.recall).
        return (CandidateRow, (dict(dict.items(self)), dict(self._sealed)))

    def __repr__(self) -> str:
        return f"CandidateRow({dict(dict.items(self))!r}, sealed={sorted(self._sealed)!r})"


_MISSING = object()


def candidate_rows(ids: list[str], *, vector: str | None, tokens: dict[str, str]) -> list[dict[str, Any]]:
    """Everything scoring needs for each candidate, in one query; sealed text opened."""
    lexemes = sorted(tokens)
    if not ids:
        return []
    cosine = "NULL" if vector is None else (
        "CASE WHEN m.embedding IS NULL THEN NULL ELSE 1 - (m.embedding <=> %s::vector) END"
    )
    # The best window of a long memory (memories.embeddings.passages); NULL for short ones.
    passage = "NULL" if vector is None else (
        f"(SELECT max(1 - (p.embedding <=> %s::vector)) FROM {PASSAGE} p WHERE p.memory_id = m.id)"
    )
    # Which query lexemes each memory holds: the field weights they appear under (A
    # title/phrases, B tags/summary, C content) and how often.
    lexical = "'{}'::text[]" if not lexemes else (
        "ARRAY(SELECT t.lexeme || ':' || array_to_string(t.weights, '') || ':' "
        "|| coalesce(array_length(t.positions, 1), 1) "
        "FROM unnest(m.search_vector) t WHERE t.lexeme = ANY(%s::text[]))"
    )
    params: list[Any] = []
    if vector is not None:
        params.append(vector)
    if lexemes:
        params.append(token_array(lexemes))
    if vector is not None:
        params.append(vector)
    params.append(ids)
    sql = (
        "SELECT m.id, m.space_id, sp.slug, m.title, m.summary, m.content, m.canonical_phrases, "
        "m.tags, m.kind, m.memory_type, m.priority, m.reliability, m.importance, m.decay_policy, "
        "m.version, m.source_type, m.source_ref, m.source_uri, m.created_at, m.updated_at, "
        "m.occurred_at, m.archived, m.content_hash, s.confidence, s.last_used_at, "
        f"s.last_accessed_at, s.access_count, s.usage_count, s.decayed_at, {cosine}, {lexical}, "
        f"coalesce(length(m.search_vector), 0), {passage} "
        f"FROM {MEMORY} m JOIN {MEMORY_STATS} s ON s.memory_id = m.id "
        f"JOIN {SPACE} sp ON sp.id = m.space_id WHERE m.id = ANY(%s) ORDER BY m.id"
    )
    with reading_connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = [dict(zip(CANDIDATE_COLUMNS, row, strict=True)) for row in cursor.fetchall()]
    rows: list[dict[str, Any]] = []
    for values in fetched:
        # Sealed text stays sealed until read (CandidateRow).
        blobs = {column: values.pop(column) for column in SEALED_COLUMNS}
        sealed = {column: None if blob is None else bytes(blob) for column, blob in blobs.items()}
        row = CandidateRow(values, sealed)
        rows.append(row)
        # Django's psycopg setup hands jsonb back as text; decode it like the ORM would.
        if isinstance(row["decay_policy"], str):
            row["decay_policy"] = json.loads(row["decay_policy"])
        matched: dict[str, tuple[float, int]] = {}
        for entry in row["matched_lexemes"] or []:
            rest, _, count = entry.rpartition(":")
            token, _, weights = rest.rpartition(":")
            lexeme = tokens[token]
            weight = max(FIELD_WEIGHTS.get(w, 0.3) for w in weights or "D")
            # A lexeme can match under two keys of a space mid-rotation; keep the best.
            matched[lexeme] = max(matched.get(lexeme, (0.0, 0)), (weight, int(count)))
        row["matched_lexemes"] = matched
    return rows


# Field weights for the lexical signal: title and phrases count fully, content least.
FIELD_WEIGHTS = {"A": 1.0, "B": 0.6, "C": 0.3, "D": 0.3}


def lexical_signal(matched: dict[str, tuple[float, int]], plan: LexicalPlan, *, length: int = 0) -> float:
    """BM25 over the keyed tokens, as a share of what the query could score, in [0, 1].

    Each query lexeme the memory holds adds its idf (rare words count more than common
    ones, so "dana" in a space about Dana weighs little) × its field weight × BM25's term
    factor: saturating in how often it occurs, and normalised by the memory's length
    against the space's average (`length` distinct lexemes), so a word in a short memory
    weighs more than the same word lost in a long one. The factor is 1 for one occurrence
    in a memory of average length; the sum is divided by the idf of all the query's
    lexemes, so a memory holding every one of them in its title scores about 1.
    """
    total = plan.query_idf
    if not total:
        return 0.0
    config = settings.SAM_RECALL
    k1, b = float(config["BM25_K1"]), float(config["BM25_B"])
    relative = length / plan.average_length if plan.average_length and length else 1.0
    norm = k1 * (1 - b + b * relative)
    score = sum(plan.idf(lexeme) * weight * count * (k1 + 1) / (count + norm)
                for lexeme, (weight, count) in matched.items())
    return min(1.0, score / total)


def pairwise_cosines(ids: list[str]) -> dict[tuple[str, str], float]:
    """Cosine similarity of every pair among `ids` that both have vectors (for dedupe)."""
    if len(ids) < 2:
        return {}
    with reading_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.id, b.id, 1 - (a.embedding <=> b.embedding) FROM {MEMORY} a "
            f"JOIN {MEMORY} b ON a.id < b.id WHERE a.id = ANY(%s) AND b.id = ANY(%s) "
            "AND a.embedding IS NOT NULL AND b.embedding IS NOT NULL",
            [ids, ids],
        )
        return {(a, b): float(sim) for a, b, sim in cursor.fetchall()}


def refresh_lexeme_stats(space_id: int) -> int:
    """Recount lexeme document frequencies for one space. Returns the number of lexemes.

    One transaction: a recall running meanwhile sees the old counts until the new ones are
    all in, never an empty table.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        # One recount of a space at a time: a second waits, then counts what the first did
        # not see (two at once would each insert the same lexemes).
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LEXEME_LOCK, space_id])
        # Marked fresh under the lock, inside the transaction: a write from here on marks it
        # stale again and queues the next recount (retrieval.freshness).
        cursor.execute("UPDATE retrieval_spacetextstats SET stale = false WHERE space_id = %s", [space_id])
        cursor.execute("DELETE FROM retrieval_lexemestat WHERE space_id = %s", [space_id])
        # ts_stat takes the text of a query; the id is an int, so formatting it is safe.
        inner = f"SELECT search_vector FROM {MEMORY} WHERE space_id = {int(space_id)}"
        cursor.execute(
            "INSERT INTO retrieval_lexemestat (space_id, lexeme, ndoc) "
            "SELECT %s, word, ndoc FROM ts_stat(%s) WHERE length(word) <= 200",
            [space_id, inner],
        )
        lexemes = cursor.rowcount
        cursor.execute(
            "INSERT INTO retrieval_spacetextstats (space_id, documents, average_length, stale, refreshed_at) "
            f"SELECT %s, count(*), coalesce(avg(length(search_vector)), 0), false, now() FROM {MEMORY} "
            "WHERE space_id = %s "
            "ON CONFLICT (space_id) DO UPDATE SET documents = EXCLUDED.documents, "
            "average_length = EXCLUDED.average_length, refreshed_at = EXCLUDED.refreshed_at",
            [space_id, space_id],
        )
        return lexemes
