"""Permission-aware reads of spaces and memories. Every query starts at governance.access."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Func, Q, QuerySet

from core.actor import Actor
from core.errors import NotFound
from core.models import Space
from governance import access, roles
from governance.crypto import search
from memories import entry
from memories.models import Memory, MemoryQuerySet, MemoryVersion, ReviewItem


def space_list(*, actor: Actor) -> QuerySet[Space]:
    # With the description, which the list shows (Space.objects leaves it out).
    return access.spaces_visible(actor).defer(None).order_by("slug")


def space_get(*, actor: Actor, slug: str) -> Space:
    return access.access_space(actor, slug=slug)


@dataclass(frozen=True)
class MemoryFilters:
    """List filters; None means "any"."""

    spaces: list[str] = field(default_factory=list)
    memory_type: str | None = None
    kind: str | None = None
    tags: list[str] = field(default_factory=list)
    reliability: str | None = None
    archived: bool | None = False
    embedding_status: str | None = None
    text: str | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    # Only what SAM knows about the caller: what they wrote, and what their own spaces hold.
    about_me: bool = False
    # What SAM knows about another person (a curator's view of it, within what they may read).
    about_user: Actor | None = None
    # Placed in a category of that name (memories.categories.services).
    category: str | None = None
    # Of the kinds of one kind group (KIND_GROUPS: seed 003's fact, preference, …, knowledge).
    kind_group: str | None = None


def memory_list(*, actor: Actor, filters: MemoryFilters) -> QuerySet[Memory]:
    """Memories `actor` may read, filtered, newest first; archived ones only when asked for.

    `text` matches the weighted full-text vector (web-search syntax: quotes, OR, -word),
    so a memory is findable the moment it is written, before its embedding is ready.
    However the result is sliced, filtered or iterated, the memories it yields show no
    link to a memory `actor` may not see (hide_unseen_links): they are for display.
    """
    queryset = access.restrict(_seen_by(actor, Memory.objects.with_related()), actor)
    if filters.about_me:
        queryset = queryset.filter(about(actor))
    if filters.about_user is not None:
        queryset = queryset.filter(about(filters.about_user))
    if filters.kind_group:
        queryset = queryset.filter(kind__in=kinds_in_group(filters.kind_group))
    if filters.category:
        queryset = queryset.filter(category_links__category__name=filters.category)
    if filters.spaces:
        queryset = queryset.filter(space__slug__in=filters.spaces)
    if filters.memory_type:
        queryset = queryset.filter(memory_type=filters.memory_type)
    if filters.kind:
        queryset = queryset.filter(kind=filters.kind)
    if filters.tags:
        queryset = queryset.filter(tags__contains=filters.tags)
    if filters.reliability:
        queryset = queryset.filter(reliability=filters.reliability)
    if filters.archived is not None:
        queryset = queryset.filter(archived=filters.archived)
    if filters.embedding_status:
        queryset = queryset.filter(embedding_status=filters.embedding_status)
    if filters.updated_after:
        queryset = queryset.filter(updated_at__gte=filters.updated_after)
    if filters.updated_before:
        queryset = queryset.filter(updated_at__lt=filters.updated_before)
    if filters.text:
        spaces = access.spaces_visible(actor)
        if filters.spaces:
            spaces = spaces.filter(slug__in=filters.spaces)
        queryset = queryset.filter(search.text_match(spaces.values_list("pk", flat=True), filters.text))
    return queryset.order_by("-updated_at", "id")


# Kind groups: seed 003's categories of what SAM knows about a person (fact, preference,
# style, topic, summary; every other kind is knowledge). Not a space's categories (topics a
# curator defines, memories.categories), which `?category=` filters on /memories/.
GROUP_KINDS = {"fact": ["fact"], "preference": ["preference"], "style": ["style"], "topic": ["topic"],
               "summary": ["summary"]}
KIND_GROUPS = (*GROUP_KINDS, "knowledge")


def kind_group_of(kind: str) -> str:
    return next((name for name, kinds in GROUP_KINDS.items() if kind in kinds), "knowledge")


def kinds_in_group(group: str) -> list[str]:
    if group in GROUP_KINDS:
        return GROUP_KINDS[group]
    return [kind for kind in entry.known_kinds() if kind_group_of(kind) == "knowledge"]


def about(actor: Actor) -> Q:
    """What SAM knows about `actor`: memories they wrote, and those of personal spaces (kind
    `user`) they own, whoever wrote them there (an import run by SAM, say)."""
    user = access.user_or_none(actor)
    if user is None:
        return Q(pk__in=[])
    return Q(created_by=user) | Q(space__kind="user", space_id__in=_owned_space_ids(actor))


def _owned_space_ids(actor: Actor) -> list[int]:
    owner = roles.RANK[roles.Role.OWNER]
    return [pk for pk, granted in access.rights(actor).items() if granted.rank >= owner]


def my_memory_get(*, actor: Actor, memory_id: str) -> Memory:
    """A memory of what SAM knows about `actor` (about(actor), archived or not), else NotFound:
    the My memory page acts only on those, so another person's memory does not exist there
    even in a space `actor` may read."""
    found = memory_list(actor=actor, filters=MemoryFilters(about_me=True, archived=None)).filter(pk=memory_id)
    memory = found.first()
    if memory is None:
        raise NotFound(f"No memory '{memory_id}'.")
    return memory


def personal_spaces(*, actor: Actor) -> QuerySet[Space]:
    """The personal spaces (kind `user`) `actor` owns: what "forget everything about me" empties."""
    return access.spaces_visible(actor).filter(kind="user", pk__in=_owned_space_ids(actor)).order_by("slug")


def memory_get(*, actor: Actor, memory_id: str) -> Memory:
    """The memory, if `actor` may read it (else NotFound), as they may see it."""
    return access.access_object(_seen_by(actor, Memory.objects.with_related()), actor, pk=memory_id,
                                label="memory")


def memory_read_back(*, actor: Actor, memory: Memory) -> Memory:
    """A memory `actor` has just written, as they may read it back: through the gateway, or,
    when a tag restricted above their role hides it from them, as written (they will not see
    it in lists) with its links to memories they may not see blanked."""
    try:
        return memory_get(actor=actor, memory_id=memory.id)
    except NotFound:
        return hide_unseen_links([memory], actor=actor)[0]


def _seen_by(actor: Actor, memories: MemoryQuerySet) -> MemoryQuerySet:
    """`memories`, each batch of which hides its links to memories `actor` may not see."""
    return memories.prepared(lambda batch: hide_unseen_links(batch, actor=actor))


def hide_unseen_links(memories: list[Memory], *, actor: Actor) -> list[Memory]:
    """Blank `superseded_by` where it names a memory the actor may not see, so a visible
    memory never reveals a hidden one; one query for all of `memories`, none without links.

    The same rule as recorded history's (governance.access.hide_unseen_links_in, which
    versions follow too). In memory only: the instances are for display, never to save.
    """
    links = [{"superseded_by": memory.superseded_by_id} for memory in memories]
    access.hide_unseen_links_in(links, actor)
    for memory, link in zip(memories, links, strict=True):
        memory.superseded_by_id = link["superseded_by"]
    return memories


def _versions(*, actor: Actor, memory_id: str) -> QuerySet[MemoryVersion]:
    memory = memory_get(actor=actor, memory_id=memory_id)
    return memory.versions.select_related("actor").order_by("-version")


def memory_version_list(*, actor: Actor, memory_id: str) -> QuerySet[MemoryVersion]:
    """A memory's versions, newest first (404 for a memory `actor` may not read).

    Pass each page through `memory_versions_prepared` before showing it.
    """
    return _versions(actor=actor, memory_id=memory_id)


def memory_versions_prepared(versions: list[MemoryVersion], *, actor: Actor) -> list[MemoryVersion]:
    """A page of versions whose snapshots and diffs name no memory `actor` may not see (one
    query for the page)."""
    return _hide_unseen_links_in_versions(list(versions), actor=actor)


def memory_version_get(*, actor: Actor, memory_id: str, version: int) -> MemoryVersion:
    found = _versions(actor=actor, memory_id=memory_id).filter(version=version).first()
    if found is None:
        raise NotFound(f"Memory '{memory_id}' has no version {version}.")
    return _hide_unseen_links_in_versions([found], actor=actor)[0]


def _hide_unseen_links_in_versions(versions: list[MemoryVersion], *, actor: Actor) -> list[MemoryVersion]:
    """Blank snapshot and diff links to memories `actor` may not see, as a memory's own
    superseded_by is blanked. In memory only: the versions are for display."""
    access.hide_unseen_links_in([[version.snapshot, version.changes] for version in versions], actor)
    return versions


def space_stats(*, actor: Actor, slug: str, top_tags: int = 20) -> dict[str, Any]:
    """What a space holds, counted over the memories `actor` may read (so restricted ones
    are not counted for a reader who may not see them): totals, by type and kind, the
    most used tags, and how far embedding has got."""
    space = access.access_space(actor, slug=slug)
    memories = access.restrict(Memory.objects.filter(space=space), actor)
    active = memories.filter(archived=False)

    def counts(field_name: str, queryset: QuerySet[Memory]) -> dict[str, int]:
        rows = queryset.order_by().values(field_name).annotate(n=Count("id")).order_by("-n", field_name)
        return {row[field_name]: row["n"] for row in rows}

    tags = (active.order_by().annotate(tag=Func(F("tags"), function="unnest")).values("tag")
            .annotate(n=Count("id")).order_by("-n", "tag")[:top_tags])
    return {
        "space": space.slug,
        "memories": {"active": active.count(), "archived": memories.filter(archived=True).count()},
        "by_type": counts("memory_type", active),
        "by_kind": counts("kind", active),
        "embedding": counts("embedding_status", active),
        "top_tags": [{"tag": row["tag"], "memories": row["n"]} for row in tags],
    }


def review_list(*, actor: Actor, spaces: list[str], kind: str | None, status: str) -> QuerySet[ReviewItem]:
    """The review queue as `actor` may see it: items of spaces it reads, about memories it
    may see (restricted memories stay hidden here too), newest first."""
    rows = access.restrict(ReviewItem.objects.select_related("space", "memory", "other"), actor)
    visible = access.restrict(Memory.objects.all(), actor).values("pk")
    # A pair shows only when the actor may see both memories.
    rows = rows.filter(Q(other__isnull=True) | Q(other__in=visible), memory__in=visible, status=status)
    if spaces:
        rows = rows.filter(space__slug__in=spaces)
    if kind:
        rows = rows.filter(kind=kind)
    return rows.order_by("-created_at", "-id")
