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
from dataclasses import dataclass, field
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


def vector_candidates(scope: Scope, vector: str, limit: int) -> list[str]:
    """Nearest neighbours by cosine distance through the HNSW index.

    Iterative index scans (pgvector ≥ 0.8) keep recall up when filters are selective:
    the index keeps scanning until `limit` rows pass the filter.
    """
    where, params = scope.where()
    ef_search = max(limit, int(settings.SAM_RECALL["HNSW_EF_SEARCH"]))
    with reading_connection.cursor() as cursor:
        # SET LOCAL lasts until the end of the surrounding transaction (the caller's atomic).
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true), "
                       "set_config('hnsw.iterative_scan', 'relaxed_order', true)", [str(ef_search)])
        cursor.execute(
            f"SELECT m.id FROM {MEMORY} m WHERE {where} AND m.embedding IS NOT NULL "
            "ORDER BY m.embedding <=> %s::vector LIMIT %s",
            [*params, vector, limit],
        )
        return [row[0] for row in cursor.fetchall()]


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

    def tokens_of(self, lexemes: list[str]) -> list[str]:
        wanted = set(lexemes)
        return sorted(token for token, lexeme in self.tokens.items() if lexeme in wanted)

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
    plan.tokens = search.query_tokens(scope.space_ids, lexemes)
    counts: dict[str, int] = {}
    # The tokens' document counts and the spaces' sizes in one round trip: a NULL token
    # marks a space's (documents, average length) row.
    with reading_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT lexeme, ndoc, NULL::float8 FROM {LexemeStat._meta.db_table} "
            "WHERE space_id = ANY(%s) AND lexeme = ANY(%s) UNION ALL "
            f"SELECT NULL, documents, average_length FROM {SpaceTextStats._meta.db_table} "
            "WHERE space_id = ANY(%s)",
            [list(scope.space_ids), list(plan.tokens), list(scope.space_ids)],
        )
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
    if not plan.chosen:
        return []
    where, params = scope.where()
    return _ids(
        f"SELECT m.id FROM {MEMORY} m, CAST(%s AS tsquery) q "
        f"WHERE {where} AND m.search_vector @@ q "
        f"ORDER BY ts_rank_cd('{RANK_WEIGHTS}', m.search_vector, q, 32) DESC, m.id LIMIT %s",
        [tsquery_text(plan.tokens_of(plan.chosen)), *params, limit],
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


def exact_candidates(scope: Scope, grams: list[str], limit: int) -> list[str]:
    if not grams:
        return []
    where, params = scope.where()
    tokens = sorted(search.query_tokens(scope.space_ids, grams, phrase=True))
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
            f"WITH hits AS MATERIALIZED (SELECT id FROM {MEMORY} WHERE phrase_tokens && %s::varchar[]) "
            f"SELECT m.id FROM {MEMORY} m JOIN hits ON hits.id = m.id WHERE {where} "
            "ORDER BY m.updated_at DESC, m.id LIMIT %s",
            [tokens, *params, limit],
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
        "FROM unnest(m.search_vector) t WHERE t.lexeme = ANY(%s))"
    )
    params: list[Any] = []
    if vector is not None:
        params.append(vector)
    if lexemes:
        params.append(lexemes)
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
