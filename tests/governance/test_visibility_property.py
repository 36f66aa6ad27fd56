"""Property: in any world, the API shows each caller exactly the memories the rules allow.

Hypothesis draws small worlds (spaces, users with roles held directly or through a group,
superusers, memories with tags, restricted tags, restricted memories, one-by-one grants,
tokens narrowed to spaces and capped at a role). A small model below computes, from the
rules alone, which memories each caller may see; the memories list must return exactly
that set (across pages), and recall and context packs must never go beyond it.

The rules the model encodes:
- A user reads a space when it holds any role there, directly or through a group;
  superusers read every space. Its rank there is that of its highest role
  (viewer = auditor = 1, contributor = 2, curator = 3, owner = 4; superusers 4).
- A token naming spaces reads only those; a token with a role caps the rank at that role's.
- In a space it reads, a caller sees a memory unless the memory is restricted above its
  rank, or carries a tag the space restricts above its rank; a memory granted to the user
  one by one is seen anyway (within the spaces the caller reads).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import Group
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant, restricted_tag_set
from memories import services as memory_services
from memories.models import Memory
from memories.restrictions import memory_grant_view, memory_restrict
from tests.factories import SpaceFactory, UserFactory

ROLES = ("owner", "curator", "contributor", "auditor", "viewer")
RESTRICTABLE = ("contributor", "curator", "owner")
RANK = {"viewer": 1, "auditor": 1, "contributor": 2, "curator": 3, "owner": 4}
TAGS = ("alpha", "beta", "gamma")
SHARED_WORD = "lighthouse"


# --- the world, as plain data -------------------------------------------------------------

@dataclass(frozen=True)
class UserSpec:
    superuser: bool
    roles: tuple[str | None, ...]          # per space, held directly
    groups: frozenset[int]                 # indexes into WorldSpec.groups
    token_spaces: frozenset[int]           # empty: every space the user reads
    token_role: str                        # "": no cap


@dataclass(frozen=True)
class MemorySpec:
    space: int
    tags: tuple[str, ...]
    restricted_to: str | None
    archived: bool
    granted_to: frozenset[int]             # indexes into WorldSpec.users


@dataclass(frozen=True)
class WorldSpec:
    spaces: int
    groups: tuple[tuple[str | None, ...], ...]                # per group, a role per space
    restricted_tags: tuple[tuple[tuple[str, str], ...], ...]  # per space, (tag, min_role)
    users: tuple[UserSpec, ...]
    memories: tuple[MemorySpec, ...]


@st.composite
def worlds(draw) -> WorldSpec:
    spaces = draw(st.integers(1, 3))
    # No role is drawn often enough that a role held only through a group matters.
    role_or_none = st.sampled_from((None, None, *ROLES))
    groups = tuple(tuple(draw(role_or_none) for _ in range(spaces))
                   for _ in range(draw(st.sampled_from((0, 1, 1, 2)))))
    restricted_tags = tuple(
        tuple(sorted(draw(st.dictionaries(st.sampled_from(TAGS), st.sampled_from(RESTRICTABLE),
                                          max_size=2)).items()))
        for _ in range(spaces)
    )
    space_index = st.integers(0, spaces - 1)
    users = tuple(
        UserSpec(
            superuser=draw(st.integers(0, 7)) == 0,
            roles=tuple(draw(role_or_none) for _ in range(spaces)),
            groups=frozenset(g for g in range(len(groups)) if draw(st.booleans())),
            token_spaces=draw(st.frozensets(space_index, max_size=spaces)),
            token_role=draw(st.sampled_from(("", "", *ROLES))),
        )
        for _ in range(draw(st.integers(1, 4)))
    )
    user_index = st.integers(0, len(users) - 1)
    memories = tuple(
        MemorySpec(
            space=draw(space_index),
            tags=tuple(sorted(draw(st.frozensets(st.sampled_from(TAGS))))),
            restricted_to=draw(st.sampled_from((None, None, *RESTRICTABLE))),
            archived=draw(st.integers(0, 4)) == 0,
            granted_to=draw(st.frozensets(user_index, max_size=2)),
        )
        for _ in range(draw(st.integers(1, 7)))
    )
    return WorldSpec(spaces, groups, restricted_tags, users, memories)


# --- the model ----------------------------------------------------------------------------

def expected_visible(world: WorldSpec, user_index: int) -> set[int]:
    """Indexes of the memories the user's token may see, from the rules alone."""
    user = world.users[user_index]
    rank_in: dict[int, int] = {}
    for space in range(world.spaces):
        held = {user.roles[space], *(world.groups[g][space] for g in user.groups)} - {None}
        if user.superuser:
            rank = RANK["owner"]
        elif held:
            rank = max(RANK[role] for role in held)
        else:
            continue
        if user.token_spaces and space not in user.token_spaces:
            continue
        if user.token_role:
            rank = min(rank, RANK[user.token_role])
        rank_in[space] = rank

    visible = set()
    for index, memory in enumerate(world.memories):
        rank = rank_in.get(memory.space)
        if rank is None:
            continue
        restricted_tags = dict(world.restricted_tags[memory.space])
        allowed = (
            (memory.restricted_to is None or RANK[memory.restricted_to] <= rank)
            and all(RANK[restricted_tags[tag]] <= rank for tag in memory.tags if tag in restricted_tags)
        )
        if allowed or user_index in memory.granted_to:
            visible.add(index)
    return visible


# --- building the world through the services ----------------------------------------------

@dataclass
class Built:
    clients: list[APIClient]
    memory_ids: list[str]


def build(world: WorldSpec, capture_on_commit) -> Built:
    run = uuid.uuid4().hex[:8]
    spaces = [SpaceFactory() for _ in range(world.spaces)]
    groups = [Group.objects.create(name=f"gov-{run}-{n}") for n in range(len(world.groups))]
    for group, roles_by_space in zip(groups, world.groups, strict=True):
        for space, role in zip(spaces, roles_by_space, strict=True):
            if role:
                membership_grant(actor=SYSTEM, space=space, group=group, role=role)
    for space, tags in zip(spaces, world.restricted_tags, strict=True):
        for tag, min_role in tags:
            restricted_tag_set(actor=SYSTEM, space=space, tag=tag, min_role=min_role)

    users = []
    for n, spec in enumerate(world.users):
        user = UserFactory(username=f"gov-{run}-user{n}", is_superuser=spec.superuser)
        user.groups.set([groups[g] for g in spec.groups])
        for space, role in zip(spaces, spec.roles, strict=True):
            if role:
                membership_grant(actor=SYSTEM, space=space, user=user, role=role)
        users.append(user)

    # Embedded on commit, as in production, so recall's vector channel has something to
    # find. One bulk write is one embedding job: the model runs once per world, not per memory.
    with capture_on_commit(execute=True):
        result = memory_services.memory_bulk_create(actor=SYSTEM, items=[
            {"space": spaces[spec.space].slug, "title": f"{SHARED_WORD.title()} note {n}",
             "content": f"The {SHARED_WORD} keeper wrote note number {n} for the log.",
             "tags": list(spec.tags), "canonical_phrases": [f"{SHARED_WORD} note {n}"]}
            for n, spec in enumerate(world.memories)
        ], atomic=True)
    assert not result.failed, [row.errors for row in result.failed]
    memories = result.created
    assert Memory.objects.filter(pk__in=[m.pk for m in memories], embedding_status="ready").count() \
        == len(memories)
    for memory, spec in zip(memories, world.memories, strict=True):
        if spec.restricted_to:
            memory_restrict(actor=SYSTEM, memory_id=memory.pk, min_role=spec.restricted_to)
        for grantee in sorted(spec.granted_to):
            memory_grant_view(actor=SYSTEM, memory_id=memory.pk, user=users[grantee])
        if spec.archived:
            memory_services.memory_archive(actor=SYSTEM, memory_id=memory.pk)

    clients = []
    for user, spec in zip(users, world.users, strict=True):
        _, raw = api_token_issue(user=user, name="property", role=spec.token_role,
                                 spaces=[spaces[s] for s in sorted(spec.token_spaces)])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        clients.append(client)
    return Built(clients, [m.pk for m in memories])


# --- asking the API -----------------------------------------------------------------------

def listed_ids(client: APIClient) -> tuple[list[str], list[bytes]]:
    """Every memory id the list returns, following pages of three; and each page's body."""
    ids, bodies = [], []
    url = "/api/v1/memories/?archived=any&page_size=3"
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        page = response.json()
        ids += [m["id"] for m in page["results"]]
        bodies.append(response.content)
        url = page["next"]
    assert page["count"] == len(ids)
    return ids, bodies


def post(client: APIClient, path: str, body: dict):
    response = client.post(path, {"track": False, "k": 50, **body}, format="json")
    assert response.status_code == 200, response.content
    return response


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(world=worlds())
def test_every_caller_sees_exactly_what_the_rules_allow(db, django_capture_on_commit_callbacks, world):
    # Each example builds in a savepoint that is rolled back, so examples never see
    # each other's spaces (superusers read every space there is). Recall caches need no
    # clearing: their keys hold the caller and its visibility, new in every example.
    with transaction.atomic():
        built = build(world, django_capture_on_commit_callbacks)
        ids = built.memory_ids
        active = {n for n, spec in enumerate(world.memories) if not spec.archived}

        for user_index, client in enumerate(built.clients):
            visible = {ids[n] for n in expected_visible(world, user_index)}
            visible_active = {ids[n] for n in expected_visible(world, user_index) & active}
            hidden = set(ids) - visible
            who = f"user {user_index} ({world.users[user_index]})"

            listed, pages = listed_ids(client)
            assert len(listed) == len(set(listed)), f"{who}: the list repeats a memory across pages"
            assert set(listed) == visible, who

            recent = post(client, "/api/v1/recall/", {"query_type": "recent"})
            recalled = {m["id"] for m in recent.json()["data"]["ranked_memory_list"]}
            assert recalled == visible_active, who

            semantic = post(client, "/api/v1/recall/", {
                "query": f"{SHARED_WORD} note", "thresholds": {"similarity": 0, "composite_min": 0}})
            found = {m["id"] for m in semantic.json()["data"]["ranked_memory_list"]}
            assert found <= visible_active, who
            # Every memory holds the query's words, so a caller who may see any finds some.
            assert bool(found) == bool(visible_active), who

            pack = post(client, "/api/v1/context-packs/", {"pack_type": "boot", "token_budget": 200000})
            packed = {m["id"] for m in pack.json()["json"]["items"]}
            assert packed == visible_active, who

            # No answer so much as names a hidden memory (conflicts, follow-ups, facts).
            for body in (*pages, recent.content, semantic.content, pack.content):
                text = body.decode()
                assert not {memory_id for memory_id in hidden if memory_id in text}, who
        transaction.set_rollback(True)
