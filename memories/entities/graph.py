"""The relationship graph (seed 002, Phase 4): typed, directed edges between memories.

Edges are made by the services (supersession and merges in memories.lifecycle.write_checks, a chat
import's knowledge of one conversation, PRD formation) and by curators here. An edge is
shown only where the reader may see both ends, so the graph never names a hidden memory.
Traversal walks edges both ways, naming the reverse direction by the type's inverse
("SUPERSEDES" read backwards is "SUPERSEDED_BY").
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q

from core.actor import Actor
from core.errors import InvalidInput, NotFound
from governance import access
from governance.audit.services import audit_record
from memories.models import Memory, MemoryRelation, RelationType

# Each type read from its target back to its source; symmetric types read the same.
INVERSE = {
    "RELATES_TO": "RELATES_TO", "SIMILAR_TO": "SIMILAR_TO", "CONTRADICTS": "CONTRADICTS",
    "LEADS_TO": "FOLLOWS_FROM", "DERIVED_FROM": "SOURCE_OF", "SOLVES": "SOLVED_BY",
    "SUPERSEDES": "SUPERSEDED_BY", "OCCURRED_BEFORE": "OCCURRED_AFTER", "EVOLVED_INTO": "EVOLVED_FROM",
    "INVALIDATED_BY": "INVALIDATES", "PREFERS_OVER": "LESS_PREFERRED_THAN", "PART_OF": "HAS_PART",
    "DEPENDS_ON": "REQUIRED_BY", "IMPLEMENTS": "IMPLEMENTED_BY", "EXEMPLIFIES": "EXEMPLIFIED_BY",
}
MAX_DEPTH = 3
MAX_NODES = 200


@dataclass(frozen=True)
class Edge:
    id: int
    source: str
    target: str
    relation_type: str
    strength: float
    provenance: dict


@dataclass(frozen=True)
class Neighbour:
    """A memory one edge away from `origin`, and how: `relation` read from origin's side."""

    memory_id: str
    origin: str
    relation: str
    strength: float


def relation_create(*, actor: Actor, source_id: str, target_id: str, relation_type: str,
                    strength: float = 1.0, note: str = "") -> tuple[MemoryRelation, bool]:
    """A curator's edge between two memories of one space (or its new strength); audited.
    Returns the edge and whether it is new."""
    if relation_type not in RelationType.values:
        raise InvalidInput("Unknown relation type.", fields={
            "relation_type": [f"One of {', '.join(RelationType.values)}."]})
    if not 0 <= strength <= 1:
        raise InvalidInput("Strength is between 0 and 1.", fields={"strength": ["Between 0 and 1."]})
    source = access.access_object(Memory.objects.select_related("space"), actor, pk=source_id,
                                  action="curate", label="memory")
    target = access.restrict(Memory.objects.all(), actor).filter(pk=target_id).first()
    if target is None:
        raise NotFound(f"No memory '{target_id}'.", fields={"target": ["No such memory."]})
    if target.pk == source.pk or target.space_id != source.space_id:
        raise InvalidInput("An edge joins two memories of one space.",
                           fields={"target": ["Another memory of the same space."]})
    # Ids and numbers only, never text (a curator's note stays in the audit record).
    provenance = {"by": "curator"}
    relation, created = MemoryRelation.objects.update_or_create(
        source=source, target=target, relation_type=relation_type,
        defaults={"space_id": source.space_id, "strength": round(strength, 4), "provenance": provenance,
                  "created_by": access.user_or_none(actor)},
    )
    audit_record("edit", actor=actor, space=source.space, target=source,
                 after={"relation": relation_type, "target": target.pk, "strength": relation.strength},
                 note=(note[:200] if note else f"{relation_type} {target.pk}"))
    return relation, created


def link_in_order(memory_ids: list[str], *, strength: float, provenance: dict,
                  relation_type: str = RelationType.RELATES_TO) -> int:
    """What one conversation, session or PRD execution taught, linked in the order it came
    (seed 002's co-occurrence): each memory to the next, within one space, once. Made by
    the services as part of a write they audit, so the edges are not audited one by one.
    Returns the edges made."""
    ordered = list(dict.fromkeys(m for m in memory_ids if m))
    spaces = dict(Memory.objects.filter(pk__in=ordered).values_list("pk", "space_id"))
    made = MemoryRelation.objects.bulk_create([
        MemoryRelation(space_id=spaces[first], source_id=first, target_id=second, relation_type=relation_type,
                       strength=strength, provenance=provenance)
        for first, second in itertools.pairwise(m for m in ordered if m in spaces)
        if spaces[first] == spaces[second]
    ], ignore_conflicts=True)
    return len(made)


def relation_delete(*, actor: Actor, relation_id: int) -> None:
    relation = MemoryRelation.objects.select_related("source__space").filter(pk=relation_id).first()
    # Archived ends count: an edge to an archived memory can still be removed.
    ends = [relation.source_id, relation.target_id] if relation else []
    visible = set(access.restrict(Memory.objects.filter(pk__in=ends), actor).values_list("pk", flat=True))
    if relation is None or len(visible) < 2:
        raise NotFound(f"No relation '{relation_id}'.")
    access.access_object(Memory.objects.select_related("space"), actor, pk=relation.source_id,
                         action="curate", label="memory")
    audit_record("edit", actor=actor, space=relation.source.space, target=relation.source,
                 before={"relation": relation.relation_type, "target": relation.target_id},
                 note=f"removed {relation.relation_type} {relation.target_id}")
    relation.delete()


def visible_ids(actor: Actor, memory_ids: Iterable[str]) -> set[str]:
    return set(access.restrict(Memory.objects.filter(pk__in=list(memory_ids), archived=False), actor)
               .values_list("pk", flat=True))


def neighbours(memory_ids: list[str], *, types: list[str] | None = None, min_strength: float = 0.0,
               limit: int = MAX_NODES) -> list[Neighbour]:
    """Memories one edge from any of `memory_ids`, either way, strongest first. Unfiltered
    by visibility: callers keep only what their reader may see."""
    edges = MemoryRelation.objects.filter(Q(source_id__in=memory_ids) | Q(target_id__in=memory_ids),
                                          strength__gte=min_strength)
    if types:
        edges = edges.filter(relation_type__in=types)
    found: list[Neighbour] = []
    wanted = set(memory_ids)
    for source, target, kind, strength in edges.order_by("-strength", "id").values_list(
            "source_id", "target_id", "relation_type", "strength")[: limit * 2]:
        if source in wanted:
            found.append(Neighbour(target, source, kind, strength))
        if target in wanted:
            found.append(Neighbour(source, target, INVERSE[kind], strength))
    return found[:limit]


def traverse(*, actor: Actor, memory_id: str, depth: int = 1, types: list[str] | None = None,
             min_strength: float = 0.0) -> tuple[list[tuple[Memory, int]], list[Edge]]:
    """The memories within `depth` edges of one (itself at depth 0) and the edges between
    them, breadth first, only through memories the actor may see."""
    origin = access.access_object(Memory.objects.with_related(), actor, pk=memory_id, label="memory")
    depth = max(0, min(depth, MAX_DEPTH))
    reached: dict[str, int] = {origin.pk: 0}
    frontier = deque([origin.pk])
    for level in range(1, depth + 1):
        if not frontier or len(reached) >= MAX_NODES:
            break
        found = neighbours(list(frontier), types=types, min_strength=min_strength)
        seen = visible_ids(actor, {n.memory_id for n in found} - set(reached))
        frontier = deque()
        for neighbour in found:
            new = neighbour.memory_id in seen and neighbour.memory_id not in reached
            if new and len(reached) < MAX_NODES:
                reached[neighbour.memory_id] = level
                frontier.append(neighbour.memory_id)
    memories = {m.pk: m for m in Memory.objects.with_related().filter(pk__in=list(reached))}
    edges = MemoryRelation.objects.filter(source_id__in=list(reached), target_id__in=list(reached),
                                          strength__gte=min_strength)
    if types:
        edges = edges.filter(relation_type__in=types)
    ordered = sorted(reached, key=lambda pk: (reached[pk], pk))
    return ([(memories[pk], reached[pk]) for pk in ordered if pk in memories],
            [Edge(e.pk, e.source_id, e.target_id, e.relation_type, e.strength, e.provenance)
             for e in edges.order_by("id")])
