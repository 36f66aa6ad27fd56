"""Entities for readers and curators (memories.entities.linking keeps them; docs/recall.md, "Entities").

- An entity is shown only to a reader who may see a memory that names it, with the count
  and the memories of what that reader may see; one no such memory names is a 404, like
  one that does not exist.
- Its aliases (names merged into it) are shown to the space's curators only: a merged name
  may come from a memory the reader may not see.
- Curators correct a kind or a name, merge two entities into one (the merged name becomes
  an alias, so later mentions of it land on the kept entity) and remove one read by
  mistake. All audited; each holds the space's entity lock (memories.entities.linking.lock_spaces).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q, QuerySet

from core.actor import Actor
from core.errors import Conflict, InvalidInput, NotFound
from core.models import Space
from governance import access
from governance.audit.services import audit_record
from governance.crypto import datakeys
from memories.entities.linking import by_name, lock_spaces, token
from memories.entities.mentions import normalise
from memories.models import Entity, EntityKind, Memory, MemoryEntity

MEMORIES_SHOWN = 50
RELATED_SHOWN = 10


@dataclass(frozen=True)
class EntityView:
    """An entity as one reader sees it: how many of the memories they may read name it, and
    whether they curate its space (and so see its aliases)."""

    entity: Entity
    mentions: int
    space: str
    curator: bool

    @property
    def aliases(self) -> list[str]:
        return list(self.entity.aliases) if self.curator else []


def _visible_memories(actor: Actor) -> QuerySet[Memory]:
    return access.restrict(Memory.objects.filter(archived=False), actor)


def _visible_links(actor: Actor) -> QuerySet[MemoryEntity]:
    return MemoryEntity.objects.filter(memory_id__in=_visible_memories(actor).values("pk"))


@dataclass(frozen=True)
class EntityList:
    """A space's entities for one reader, most mentioned first: a query to page through
    (each row annotated with `mentions`), or, for a name search, the matching rows (names
    are sealed, so a search reads them all)."""

    rows: QuerySet[Entity] | list[Entity]
    space: Space
    curator: bool

    def views(self, page: list[Entity]) -> list[EntityView]:
        return [EntityView(e, e.mentions, self.space.slug, self.curator) for e in page]  # type: ignore[attr-defined]


def entity_list(*, actor: Actor, space_slug: str, kind: str = "", search: str = "") -> EntityList:
    space = access.access_space(actor, slug=space_slug)
    visible = _visible_memories(actor).filter(space=space).values("pk")
    rows = (Entity.objects.filter(space=space)
            .annotate(mentions=Count("links", filter=Q(links__memory_id__in=visible)))
            .filter(mentions__gt=0).order_by("-mentions", "id"))
    if kind:
        rows = rows.filter(kind=kind)
    curator = access.can(actor, "curate", space)
    wanted = normalise(search)
    if not wanted:
        return EntityList(rows, space, curator)
    # Aliases count for curators only (others do not see them).
    return EntityList([e for e in rows if wanted in normalise(e.name)
                       or (curator and any(wanted in normalise(a) for a in e.aliases))], space, curator)


def _readable(actor: Actor, entity_id: int) -> tuple[Entity, QuerySet[MemoryEntity], int]:
    """The entity, the links of memories naming it that `actor` may read, and how many."""
    entity = Entity.objects.select_related("space").filter(pk=entity_id).first()
    links = _visible_links(actor).filter(entity_id=entity_id)
    count = links.count() if entity is not None else 0
    if entity is None or not count:
        raise NotFound(f"No entity '{entity_id}'.")
    return entity, links, count


def entity_detail(*, actor: Actor, entity_id: int) -> dict:
    """The entity, the memories naming it (newest first) and the entities named with it."""
    entity, links, count = _readable(actor, entity_id)
    naming = links.values("memory_id")
    memories = list(Memory.objects.filter(pk__in=naming).order_by("-created_at", "-id")[:MEMORIES_SHOWN])
    together = list(_visible_links(actor).filter(memory_id__in=naming).exclude(entity_id=entity_id)
                    .values("entity_id").annotate(n=Count("id")).order_by("-n", "entity_id")
                    .values_list("entity_id", "n")[:RELATED_SHOWN])
    related = Entity.objects.in_bulk([pk for pk, _ in together])
    curator = access.can(actor, "curate", entity.space)
    return {
        "entity": EntityView(entity, count, entity.space.slug, curator),
        "memories": memories,
        "related": [(related[pk], n) for pk, n in together if pk in related],
    }


# --- what curators do -------------------------------------------------------------------------

def _curated(actor: Actor, entity_id: int) -> Entity:
    """The entity, for a curator of its space, with the space's entity lock held."""
    entity, _, _ = _readable(actor, entity_id)
    access.access_space(actor, slug=entity.space.slug, action="curate")
    lock_spaces([entity.space_id])
    fresh = Entity.objects.select_related("space").filter(pk=entity_id).first()
    if fresh is None:  # merged or removed while we waited for the lock
        raise NotFound(f"No entity '{entity_id}'.")
    return fresh


def entity_update(*, actor: Actor, entity_id: int, kind: str | None = None,
                  name: str | None = None) -> dict:
    """Correct an entity's kind or name (curators). A new name is found by its own key; a
    name another entity has already is a conflict: merge them instead. Returns the entity's
    detail as `actor` now sees it (entity_detail)."""
    with transaction.atomic():
        _correct(actor, entity_id, kind=kind, name=name)
    return entity_detail(actor=actor, entity_id=entity_id)


def _correct(actor: Actor, entity_id: int, *, kind: str | None, name: str | None) -> None:
    entity = _curated(actor, entity_id)
    if kind is None and name is None:
        return  # nothing asked, nothing changed (a PATCH of {})
    before = {"kind": entity.kind}
    if kind is not None:
        if kind not in EntityKind.values:
            raise InvalidInput("Unknown kind.", fields={"kind": [f"One of {', '.join(EntityKind.values)}."]})
        entity.kind = kind
    if name is not None:
        _rename(actor, entity, name)
    entity.save(update_fields=["kind", "name", "aliases", "key", "key_id", "alias_keys"])
    audit_record("edit", actor=actor, space=entity.space, target=entity, before=before,
                 after={"kind": entity.kind, "renamed": name is not None}, note=f"entity {entity.pk}")


def _rename(actor: Actor, entity: Entity, name: str) -> None:
    key = normalise(name)
    if len(key) < 2:
        raise InvalidInput("A name of two characters or more.", fields={"name": ["Too short."]})
    taken = by_name(entity.space_id, [key]).get(key)
    if taken is not None and taken.pk != entity.pk:
        # Named only by memories this curator may not read: say so without naming it.
        readable = _visible_links(actor).filter(entity=taken).exists()
        which = f"entity {taken.pk}" if readable else "another entity"
        raise Conflict(f"{which[0].upper()}{which[1:]} has that name already: merge them instead.",
                       fields={"name": [f"Taken by {which}."]})
    if key != normalise(entity.name):
        # The old name stays an alias: memories that still write it keep landing here.
        entity.aliases = sorted({*entity.aliases, entity.name}, key=str.casefold)
    entity.name = name.strip()
    _retoken(entity)


def _retoken(entity: Entity) -> None:
    entity.key_id = datakeys.active_key_id(entity.space_id)
    entity.key = token(entity.key_id, normalise(entity.name))
    entity.alias_keys = sorted({token(entity.key_id, normalise(alias)) for alias in entity.aliases})


def entity_merge(*, actor: Actor, entity_id: int, other_id: int) -> dict:
    """Merge `other` into the entity (curators): its memories name the entity, its names
    become aliases, and it is deleted. Returns the entity's detail as `actor` now sees it
    (entity_detail)."""
    with transaction.atomic():
        entity = _curated(actor, entity_id)
        if entity_id == other_id:
            raise InvalidInput("An entity cannot be merged into itself.",
                               fields={"other": ["Another entity."]})
        other = _curated(actor, other_id)
        if other.space_id != entity.space_id:
            raise InvalidInput("Entities of one space only.",
                               fields={"other": ["An entity of the same space."]})
        moved = list(MemoryEntity.objects.filter(entity=other).values_list("memory_id", flat=True))
        MemoryEntity.objects.bulk_create([MemoryEntity(memory_id=m, entity=entity) for m in moved],
                                         ignore_conflicts=True)
        names = {*entity.aliases, *other.aliases, other.name} - {entity.name}
        entity.aliases = sorted(names, key=str.casefold)
        _retoken(entity)
        if entity.kind == EntityKind.NAME:
            entity.kind = other.kind
        other.delete()
        entity.save(update_fields=["kind", "aliases", "key", "key_id", "alias_keys"])
        audit_record("merge", actor=actor, space=entity.space, target=entity,
                     after={"merged_entity": other_id, "memories": len(moved)}, note=f"entity {entity.pk}")
    return entity_detail(actor=actor, entity_id=entity_id)


def entity_delete(*, actor: Actor, entity_id: int) -> None:
    """Remove an entity read by mistake (curators). Its memories no longer name it; an edit
    that writes the name again makes it anew."""
    with transaction.atomic():
        entity = _curated(actor, entity_id)
        audit_record("delete", actor=actor, space=entity.space, target=entity, before={"kind": entity.kind},
                     note=f"entity {entity.pk}")
        entity.delete()
