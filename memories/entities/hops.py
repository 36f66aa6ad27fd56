"""Recall's hops through entities: from its best hits to the other memories that share a
rare name with them (retrieval.pipeline; docs/recall.md, "Entities and hops through them").

"What did Yara's little sister adopt?" finds the turn that introduces the sister ("my little
sister Nia…"); Nia's other turns ("Nia adopted a parrot called Pico") are one hop away.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from core.replica import reading_connection
from memories.entities.linking import tokens_of
from memories.entities.mentions import NOT_NAMES, mentions, normalise
from memories.models import Entity, Memory, MemoryEntity

# The rarest names of the hits that are followed, at most.
MAX_BRIDGES = 8


@dataclass(frozen=True)
class Hop:
    """`memory_id` names the entity `name` (id `entity_id`), as does the hit `via` (a memory id)."""

    memory_id: str
    entity_id: int
    name: str
    via: str


def question_keys(text: str) -> set[str]:
    """What a question may name: any run of up to three of its words (a question is often
    written in lower case) and what the rules read in it."""
    words = [w for w in (normalise(word) for word in text.split()) if w]
    runs = [words[i:i + n] for n in (1, 2, 3) for i in range(len(words) - n + 1)]
    # A run of function words only ("what did", "in the") names nothing.
    keys = {" ".join(run) for run in runs if not all(word in NOT_NAMES for word in run)}
    return keys | {m.key for m in mentions(text)}


def _sql() -> str:
    link, entity, memory = MemoryEntity._meta.db_table, Entity._meta.db_table, Memory._meta.db_table
    # Counting stops past `most` and reads the (entity, memory) index alone: a speaker named by
    # thousands of turns costs no more than one named by 51. Only active memories are reached
    # (the caller keeps those its reader may see).
    return f"""
        WITH seeded AS (
            SELECT l.memory_id, l.entity_id FROM {link} l JOIN {entity} e ON e.id = l.entity_id
            WHERE l.memory_id = ANY(%(seeds)s::varchar[])
              AND NOT (e.key = ANY(%(named)s::varchar[]) OR e.alias_keys && %(named)s::varchar[])
        ), counted AS (
            SELECT s.entity_id, (SELECT count(*) FROM (
                SELECT 1 FROM {link} l WHERE l.entity_id = s.entity_id LIMIT %(most)s + 1) AS upto) AS n
            FROM (SELECT DISTINCT entity_id FROM seeded) s
        ), bridges AS (
            SELECT entity_id, n FROM counted WHERE n BETWEEN 2 AND %(most)s
            ORDER BY n, entity_id LIMIT %(bridges)s
        ), ranked AS (
            SELECT l.entity_id, l.memory_id,
                   row_number() OVER (PARTITION BY l.entity_id ORDER BY l.memory_id DESC) AS rank
            FROM {link} l JOIN {memory} m ON m.id = l.memory_id
            WHERE l.entity_id IN (SELECT entity_id FROM bridges) AND NOT m.archived
        )
        SELECT 'seed', s.entity_id, s.memory_id, NULL::bytea, 0, 0 FROM seeded s
        WHERE s.entity_id IN (SELECT entity_id FROM bridges)
        UNION ALL
        SELECT 'hop', r.entity_id, r.memory_id, e.name, b.n, r.rank FROM ranked r
        JOIN bridges b ON b.entity_id = r.entity_id JOIN {entity} e ON e.id = r.entity_id
        WHERE r.rank <= %(per)s
    """


def hops(seed_ids: list[str], *, space_ids: Iterable[int], question: str, max_mentions: int,
         per_entity: int) -> list[Hop]:
    """Memories that name what the seeds name, in one query, through the rarer names only:
    an entity named by more than `max_mentions` memories (the two speakers of a
    conversation) links everything and tells nothing; the rarest come first, at most
    MAX_BRIDGES of them, each with its `per_entity` newest memories. Names the question
    uses itself are no hop: its own words find them. Each hop comes from the strongest seed
    (seeds are strongest first) naming it other than the memory itself, so seeds that share
    a rare name lift each other too. `space_ids`: the spaces of the seeds."""
    if not seed_ids:
        return []
    named = tokens_of(space_ids, question_keys(question))
    with reading_connection.cursor() as cursor:
        cursor.execute(_sql(), {"seeds": seed_ids, "named": named, "most": max_mentions,
                                "bridges": MAX_BRIDGES, "per": per_entity + len(seed_ids)})
        rows = cursor.fetchall()
    seeds_naming: dict[int, list[str]] = defaultdict(list)
    for _, entity_id, memory_id, *_ in sorted((r for r in rows if r[0] == "seed"),
                                              key=lambda r: seed_ids.index(r[2])):
        seeds_naming[entity_id].append(memory_id)
    name_field = Entity._meta.get_field("name")
    found: list[Hop] = []
    # The rarest name first, then each name's newest memories.
    for _, entity_id, memory_id, raw_name, _, _ in sorted((r for r in rows if r[0] == "hop"),
                                                         key=lambda r: (r[4], r[1], r[5])):
        via = next((seed for seed in seeds_naming[entity_id] if seed != memory_id), None)
        if via:
            name = name_field.from_db_value(bytes(raw_name), None, reading_connection)
            found.append(Hop(memory_id, entity_id, name, via))
    return found
