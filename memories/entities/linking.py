"""Entities: the people, projects, files and libraries memories mention (issue 16).

- When memories settle (memories.settle), their title and text are read for names
  (memories.entities.mentions); each name becomes an Entity of the space, found again by a
  keyed token of its normalised name (under every live data key of the space, so a
  rotation never splits one entity in two), and each memory is linked to what it names.
  An edit links the memory anew; an entity no memory names any more is deleted, so a
  forgotten person's name does not outlive the memories that named them.

What readers and curators do with entities is in memories.entities.services; how recall hops
through them, in memories.entities.hops.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from governance.crypto import datakeys
from memories.entities.mentions import KIND_RANK, NAME, Mention, Reading, normalise, read
from memories.models import Entity, EntityKind, Memory, MemoryEntity

# pg_advisory_xact_lock(ENTITY_LOCK, space id): one writer of a space's entities at a time.
ENTITY_LOCK = 0x454E54
LINK_BATCH = 500


def lock_spaces(space_ids: Iterable[int]) -> None:
    """Serialise entity writes per space (inside a transaction), in one order everywhere.

    Linking, releasing, merging and dropping orphans each read which links an entity has and
    then delete or link it; two at once could delete an entity a new link points to. Taken
    before any memory row lock (memory_delete takes it first), so it cannot deadlock with one.
    """
    with connection.cursor() as cursor:
        for space_id in sorted(set(space_ids)):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [ENTITY_LOCK, space_id])


def token(key_id: int, key: str) -> str:
    """The lookup token of a normalised name under a data key."""
    return datakeys.token(key_id, "entity|" + key)


def _tokens(space_id: int, keys: Iterable[str], *, writing: bool = False) -> dict[str, str]:
    """token -> normalised name, under every live key of the space. Writing, under its active
    key too: the list of live keys is cached for seconds, and an entity made under a key
    made meanwhile must still be found (reading is not worth the active key's query)."""
    key_ids = set(datakeys.live_key_ids(space_id))
    if writing:
        key_ids.add(datakeys.active_key_id(space_id))
    return {token(key_id, key): key for key_id in key_ids for key in set(keys)}


def tokens_of(space_ids: Iterable[int], keys: Iterable[str]) -> list[str]:
    """The lookup tokens of these names in these spaces (for reading)."""
    wanted = set(keys)
    return sorted({t for space_id in set(space_ids) for t in _tokens(space_id, wanted)})


def _matching(space_id: int, tokens: Iterable[str]) -> QuerySet[Entity]:
    wanted = list(tokens)
    return Entity.objects.filter(Q(key__in=wanted) | Q(alias_keys__overlap=wanted), space_id=space_id)


def by_name(space_id: int, keys: Iterable[str]) -> dict[str, Entity]:
    """The space's entities for these normalised names (by their own name or an alias)."""
    tokens = _tokens(space_id, keys, writing=True)
    found: dict[str, Entity] = {}
    for entity in _matching(space_id, tokens):
        for token in [entity.key, *entity.alias_keys]:
            if token in tokens:
                found.setdefault(tokens[token], entity)
    return found


# --- linking, as memories settle ------------------------------------------------------------

def link(memory_ids: Iterable[str]) -> int:
    """(Re)link memories to the entities they name; returns the links made."""
    memories = list(Memory.objects.filter(pk__in=list(memory_ids)).only("id", "space_id", "title", "content"))
    if not memories:
        return 0
    readings = {m.pk: read(f"{m.title}\n{m.content}") for m in memories}
    named: dict[str, list[Mention]] = {pk: list(reading.mentions) for pk, reading in readings.items()}
    by_space: dict[int, list[Memory]] = defaultdict(list)
    for memory in memories:
        by_space[memory.space_id].append(memory)
    links: list[MemoryEntity] = []
    with transaction.atomic():
        lock_spaces(by_space)
        before = set(MemoryEntity.objects.filter(memory__in=memories).values_list("entity_id", flat=True))
        MemoryEntity.objects.filter(memory__in=memories).delete()
        for space_id, space_memories in by_space.items():
            _add_known_openings(space_id, space_memories, readings, named)
            entities = _ensure(space_id, [m for memory in space_memories for m in named[memory.pk]])
            links += [MemoryEntity(memory=memory, entity=entities[mention.key])
                      for memory in space_memories for mention in named[memory.pk] if mention.key in entities]
        MemoryEntity.objects.bulk_create(links, ignore_conflicts=True)
        _drop_orphans(before - {link.entity_id for link in links})
    return len(links)


def _add_known_openings(space_id: int, memories: list[Memory], readings: dict[str, Reading],
                        named: dict[str, list[Mention]]) -> None:
    """A name opening a sentence ("Nia adopted a parrot.") counts when the space knows it
    already, or another memory of the batch names it."""
    openings = {memory.pk: readings[memory.pk].openings for memory in memories}
    wanted = {normalise(run) for runs in openings.values() for run in runs}
    if not wanted:
        return
    named_in_batch = {m.key for memory in memories for m in named[memory.pk]}
    known = (wanted & named_in_batch) | set(by_name(space_id, wanted - named_in_batch))
    for memory in memories:
        named[memory.pk] += [Mention(NAME, run) for run in openings[memory.pk] if normalise(run) in known]


def _ensure(space_id: int, found: list[Mention]) -> dict[str, Entity]:
    """The entities for these mentions, made where new; a kind a mention shows replaces "name"."""
    best: dict[str, Mention] = {}
    for mention in found:
        known = best.get(mention.key)
        if known is None or KIND_RANK[mention.kind] > KIND_RANK[known.kind]:
            best[mention.key] = mention
    entities = by_name(space_id, best)
    missing = [key for key in best if key not in entities]
    if missing:
        key_id = datakeys.active_key_id(space_id)
        Entity.objects.bulk_create([
            Entity(space_id=space_id, kind=best[key].kind, name=best[key].name, key=token(key_id, key),
                   key_id=key_id) for key in missing], ignore_conflicts=True)
        entities.update(by_name(space_id, missing))
    shown = []
    for key, entity in entities.items():
        if entity.kind == EntityKind.NAME and best[key].kind != EntityKind.NAME:
            entity.kind = best[key].kind
            shown.append(entity)
    Entity.objects.bulk_update(shown, ["kind"])  # no query when none changed
    return entities


def _drop_orphans(entity_ids: Iterable[int]) -> int:
    ids = list(entity_ids)
    if not ids:
        return 0
    named = MemoryEntity.objects.filter(entity_id__in=ids).values("entity_id")
    return Entity.objects.filter(pk__in=ids).exclude(pk__in=named).delete()[0]


def release(space_id: int, memory_ids: list[str]) -> dict[str, int]:
    """Before these memories (of one space) are deleted: the entities only they name go with them."""
    lock_spaces([space_id])
    touched = MemoryEntity.objects.filter(memory_id__in=memory_ids).values("entity_id")
    named_elsewhere = MemoryEntity.objects.filter(entity_id__in=touched).exclude(
        memory_id__in=memory_ids).values("entity_id")
    return Entity.objects.filter(pk__in=touched).exclude(pk__in=named_elsewhere).delete()[1]


def drop_orphans_everywhere() -> int:
    """Nightly: entities that lost their last memory by a path that did not release them."""
    dropped = 0
    spaces = Entity.objects.filter(links__isnull=True).values_list("space_id", flat=True).distinct()
    for space_id in sorted(set(spaces)):
        with transaction.atomic():
            lock_spaces([space_id])
            dropped += Entity.objects.filter(space_id=space_id, links__isnull=True).delete()[0]
    return dropped


def catch_up(*, hours: float = 26) -> int:
    """Nightly: link again the memories changed in the last `hours` (linking is idempotent),
    so a settle whose linking failed is made good by the next night."""
    since = timezone.now() - timedelta(hours=hours)
    ids = list(Memory.objects.filter(updated_at__gte=since).order_by("pk").values_list("pk", flat=True))
    return sum(link(ids[i:i + LINK_BATCH]) for i in range(0, len(ids), LINK_BATCH))


def link_all(*, space_ids: Iterable[int] | None = None) -> int:
    """Link every memory (of these spaces): after an upgrade, or new rules. Returns the links."""
    memories = Memory.objects.order_by("pk")
    if space_ids is not None:
        memories = memories.filter(space_id__in=list(space_ids))
    ids = list(memories.values_list("pk", flat=True))
    return sum(link(ids[i:i + LINK_BATCH]) for i in range(0, len(ids), LINK_BATCH))


def rekey(entities: list[Entity]) -> None:
    """Key rotation re-sealed these entities: their tokens, under the space's new key."""
    for entity in entities:
        key_id = datakeys.active_key_id(entity.space_id)
        key = token(key_id, normalise(entity.name))
        aliases = [token(key_id, normalise(alias)) for alias in entity.aliases]
        Entity.objects.filter(pk=entity.pk).update(key=key, key_id=key_id, alias_keys=aliases)
