"""The role matrix: every endpoint, asked by every persona, answers as the governance rules say.

Rules (governance.roles, governance.access):
- owner: everything, including manage (members, restricted tags, mode, retention, delete, forget);
  curator: read, write, edit any, curate (archive, restore, delete, version restore, restrict),
  audit; contributor: read, add memories, edit its own; auditor: read and audit; viewer: read.
- Who may not read a space or memory gets 404; who may read but not act gets 403; no
  credentials get 401.
- Restricted tags and restricted memories hide memories from roles ranked below their
  minimum role, unless the memory was granted to the user one by one.
- A token narrows its user's rights: to named spaces and to a role. A token scoped to
  spaces that were all deleted works in none (not in all of its user's spaces), and a
  scoped or role-capped token may not create spaces.

Each persona gets one world (tests/governance/conftest.py) and asks every endpoint in turn;
each request runs in a savepoint that is rolled back, so a delete does not spoil the next
case. Writes are checked twice: by status, and by whether anything changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from governance import retention
from governance.access import SYSTEM
from governance.models import RestrictedTag, SpaceMembership, UserMemorySettings
from governance.roles import Role
from memories import services as memory_services
from memories.models import Memory
from samsite.core.models import Space
from tests.factories import SpaceFactory
from tests.governance.conftest import VISIBLE, World
from tests.personas import client_for

# The seven personas, then three tokens of the owner: one capped at viewer, one scoped to
# the owner's other space, and one scoped to a space of the owner that was then deleted.
COLUMNS = ("owner", "curator", "contributor", "auditor", "viewer", "stranger", "anonymous",
           "owner@viewer-token", "owner@other-space-token", "owner@deleted-space-token")
# Personas that must be answered exactly like a column: a curator through a group, and a
# superuser who holds no role anywhere.
ANSWERED_AS = {"curator@group": "curator", "superuser": "owner"}

VISIBLE_TO = {
    **VISIBLE,
    "owner@viewer-token": {"open", "contributors", "elsewhere"},
    "owner@other-space-token": {"elsewhere"},
    "owner@deleted-space-token": set(),
}
SPACES_TO = {
    "owner": {"gov-space", "gov-other"},
    "curator": {"gov-space"},
    "contributor": {"gov-space"},
    "auditor": {"gov-space"},
    "viewer": {"gov-space"},
    "stranger": set(),
    "owner@viewer-token": {"gov-space", "gov-other"},
    "owner@other-space-token": {"gov-other"},
    "owner@deleted-space-token": set(),
}
MEMBERS = {f"user:gov-{name}" for name in
           ("owner", "curator", "contributor", "auditor", "viewer", "member")} | {"group:gov-curators"}


def column(persona: str) -> str:
    return ANSWERED_AS.get(persona, persona)


def persona_client(world: World, persona: str) -> tuple[APIClient, Any]:
    """The client a persona calls with, and the user behind it (None when anonymous)."""
    if persona == "anonymous":
        return APIClient(), None
    if persona == "owner@viewer-token":
        return client_for(world.users["owner"], role="viewer"), world.users["owner"]
    if persona == "owner@other-space-token":
        return client_for(world.users["owner"], spaces=[world.other]), world.users["owner"]
    if persona == "owner@deleted-space-token":
        # The token's only space goes: its scope is now empty, which must mean no space.
        gone = SpaceFactory(slug="gov-gone", members={world.users["owner"]: Role.OWNER})
        client = client_for(world.users["owner"], spaces=[gone])
        retention.space_delete(actor=SYSTEM, slug=gone.slug)
        return client, world.users["owner"]
    return client_for(world.users[persona]), world.users[persona]


# --- probes: what a write would change, read before and after the request -----------------

def memory_field(name: str, attribute: str) -> Callable[[World, Any], Any]:
    return lambda world, user: Memory.objects.filter(pk=world.id(name)).values_list(
        attribute, flat=True).first()


def memory_exists(name: str) -> Callable[[World, Any], Any]:
    return lambda world, user: Memory.objects.filter(pk=world.id(name)).exists()


def space_memory_count(world: World, user) -> int:
    return Memory.objects.filter(space=world.space).count()


def space_state(world: World, user) -> Any:
    return Space.objects.filter(pk=world.space.pk).values_list("description", flat=True).first()


def space_exists(world: World, user) -> bool:
    return Space.objects.filter(pk=world.space.pk).exists()


def made_space_exists(world: World, user) -> bool:
    return Space.objects.filter(slug="gov-made").exists()


def memberships(world: World, user) -> set:
    return {(m.principal, m.role) for m in SpaceMembership.objects.filter(space=world.space)}


def restricted_tags(world: World, user) -> set:
    return set(RestrictedTag.objects.filter(space=world.space).values_list("tag", "min_role"))


def my_mode(world: World, user) -> str | None:
    if user is None:
        return None
    return UserMemorySettings.objects.filter(user=user).values_list("mode", flat=True).first()


# --- the matrix ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str                      # formatted with slug= and every memory's name
    expected: tuple[int, ...]      # one status per column of COLUMNS
    body: Callable[[World], dict] | dict | None = None
    probe: Callable[[World, Any], Any] | None = None   # writes: what changes on success

    def status_for(self, persona: str) -> int:
        return self.expected[COLUMNS.index(column(persona))]

    def url(self, world: World) -> str:
        names = {name: memory.pk for name, memory in world.memories.items()}
        return "/api/v1" + self.path.format(slug=world.space.slug, **names)

    def data(self, world: World) -> dict | None:
        return self.body(world) if callable(self.body) else self.body


def version_of(name: str, **rest: Any) -> Callable[[World], dict]:
    return lambda world: {"version": world.memories[name].version, **rest}


def new_memory(world: World) -> dict:
    return {"space": world.space.slug, "title": "Matrix created note",
            "content": "A note the role matrix tries to add to the space."}


#                       own  cur  con  aud  vie  str  ano  o@v  o@x  o@-
READ = (                200, 200, 200, 200, 200, 404, 401, 200, 404, 404)
EVERYONE = (            200, 200, 200, 200, 200, 200, 401, 200, 200, 200)
MANAGE = (              200, 403, 403, 403, 403, 404, 401, 403, 404, 404)
MANAGE_204 = (          204, 403, 403, 403, 403, 404, 401, 403, 404, 404)
CURATE = (              200, 200, 403, 403, 403, 404, 401, 403, 404, 404)
CURATE_204 = (          204, 204, 403, 403, 403, 404, 401, 403, 404, 404)
AUDIT = (               200, 200, 403, 200, 403, 404, 401, 403, 404, 404)
SEEN_BY_CURATORS = (    200, 200, 404, 404, 404, 404, 401, 404, 404, 404)

CASES: tuple[Case, ...] = (
    # spaces
    Case("spaces.list", "GET", "/spaces/", EVERYONE),
    Case("spaces.create", "POST", "/spaces/",
         (201, 201, 201, 201, 201, 201, 401, 403, 403, 403),
         body={"slug": "gov-made", "name": "Made by the role matrix"}, probe=made_space_exists),
    Case("spaces.retrieve", "GET", "/spaces/{slug}/", READ),
    Case("spaces.partial_update", "PATCH", "/spaces/{slug}/", MANAGE,
         body={"description": "Edited by the role matrix"}, probe=space_state),
    Case("spaces.destroy", "DELETE", "/spaces/{slug}/", MANAGE, probe=space_exists),
    Case("spaces.forget", "POST", "/spaces/{slug}/forget/", MANAGE, probe=space_memory_count),
    # members
    Case("members.list", "GET", "/spaces/{slug}/members/", READ),
    Case("members.post", "POST", "/spaces/{slug}/members/", MANAGE,
         body={"user": "gov-newcomer", "role": "viewer"}, probe=memberships),
    Case("members.delete", "DELETE", "/spaces/{slug}/members/user:gov-member/", MANAGE_204,
         probe=memberships),
    # restricted tags
    Case("restricted_tags.list", "GET", "/spaces/{slug}/restricted-tags/", MANAGE),
    Case("restricted_tags.post", "POST", "/spaces/{slug}/restricted-tags/", MANAGE,
         body={"tag": "legal", "min_role": "curator"}, probe=restricted_tags),
    Case("restricted_tags.delete", "DELETE", "/spaces/{slug}/restricted-tags/hr/", MANAGE_204,
         probe=restricted_tags),
    # memories: reads
    Case("memories.list", "GET", "/memories/", EVERYONE),
    Case("memories.retrieve", "GET", "/memories/{open}/", READ),
    Case("memories.retrieve_archived", "GET", "/memories/{archived}/", READ),
    Case("memories.retrieve_tag_restricted", "GET", "/memories/{hr}/", SEEN_BY_CURATORS),
    Case("memories.retrieve_contributor_restricted", "GET", "/memories/{contrib_only}/",
         (200, 200, 200, 404, 404, 404, 401, 404, 404, 404)),
    Case("memories.retrieve_owner_restricted", "GET", "/memories/{owner_only}/",
         (200, 404, 404, 404, 404, 404, 401, 404, 404, 404)),
    Case("memories.retrieve_granted", "GET", "/memories/{granted}/",
         (200, 404, 404, 404, 200, 404, 401, 404, 404, 404)),
    Case("memories.retrieve_in_other_space", "GET", "/memories/{elsewhere}/",
         (200, 404, 404, 404, 404, 404, 401, 200, 200, 404)),
    Case("memories.versions", "GET", "/memories/{open}/versions/", READ),
    Case("memories.version_detail", "GET", "/memories/{open}/versions/1/", READ),
    Case("memories.version_detail_owner_restricted", "GET", "/memories/{owner_only}/versions/1/",
         (200, 404, 404, 404, 404, 404, 401, 404, 404, 404)),
    # memories: writes
    Case("memories.create", "POST", "/memories/",
         (201, 201, 201, 403, 403, 404, 401, 403, 404, 404),
         body=new_memory, probe=space_memory_count),
    Case("memories.partial_update_others", "PATCH", "/memories/{open}/", CURATE,
         body=version_of("open", title="Edited by the role matrix"),
         probe=memory_field("open", "version")),
    Case("memories.partial_update_contributors_own", "PATCH", "/memories/{contributors}/",
         (200, 200, 200, 403, 403, 404, 401, 403, 404, 404),
         body=version_of("contributors", title="Edited by the role matrix"),
         probe=memory_field("contributors", "version")),
    Case("memories.partial_update_tag_restricted", "PATCH", "/memories/{hr}/", SEEN_BY_CURATORS,
         body=version_of("hr", title="Edited by the role matrix"),
         probe=memory_field("hr", "version")),
    Case("memories.destroy_others", "DELETE", "/memories/{open}/", CURATE_204,
         probe=memory_exists("open")),
    # What someone wrote is theirs to take back (docs/capture.md, "your controls").
    Case("memories.destroy_contributors_own", "DELETE", "/memories/{contributors}/",
         (204, 204, 204, 403, 403, 404, 401, 403, 404, 404),
         probe=memory_exists("contributors")),
    Case("memories.archive", "POST", "/memories/{open}/archive/", CURATE,
         body={"reason": "matrix"}, probe=memory_field("open", "archived")),
    Case("memories.restore", "POST", "/memories/{archived}/restore/", CURATE,
         body={"reason": "matrix"}, probe=memory_field("archived", "archived")),
    Case("memories.version_restore", "POST", "/memories/{open}/versions/1/restore/", CURATE,
         body=version_of("open"), probe=memory_field("open", "version")),
    Case("memories.version_restore_contributors_own", "POST",
         "/memories/{contributors}/versions/1/restore/", CURATE,
         body=version_of("contributors"), probe=memory_field("contributors", "version")),
    Case("memories.bulk", "POST", "/memories/bulk/",
         (201, 201, 201, 200, 200, 200, 401, 200, 200, 200),
         body=lambda world: {"items": [new_memory(world)]}, probe=space_memory_count),
    Case("memories.restrict", "POST", "/memories/{open}/restrict/", CURATE,
         body={"restricted_to": "curator", "reason": "matrix"},
         probe=memory_field("open", "visibility_rank")),
    Case("memories.merge", "POST", "/memories/{open}/merge/", CURATE,
         body=lambda world: {"sources": [world.id("contributors")],
                             "version": world.memories["open"].version},
         probe=memory_field("contributors", "archived")),
    Case("memories.resolve_conflict", "POST", "/memories/{open}/resolve-conflict/", CURATE,
         body=lambda world: {"other": world.id("contributors"), "keep": "this"},
         probe=memory_field("contributors", "superseded_by_id")),
    # recall and context packs (everyone may ask; what they get back is checked below)
    Case("recall", "POST", "/recall/", EVERYONE,
         body={"query_type": "recent", "k": 50, "track": False}),
    Case("context_packs", "POST", "/context-packs/", EVERYONE,
         body={"pack_type": "boot", "k": 50, "token_budget": 20000, "track": False}),
    # the caller's own mode
    Case("me.mode_get", "GET", "/me/mode/", EVERYONE),
    Case("me.mode_put", "PUT", "/me/mode/", EVERYONE, body={"mode": "capture_only"}, probe=my_mode),
    # audit timelines
    Case("timeline.memory", "GET", "/memories/{open}/timeline/", AUDIT),
    Case("timeline.memory_tag_restricted", "GET", "/memories/{hr}/timeline/", SEEN_BY_CURATORS),
    Case("timeline.space", "GET", "/spaces/{slug}/timeline/", AUDIT),
)


def test_every_case_has_one_status_per_column():
    assert all(len(case.expected) == len(COLUMNS) for case in CASES)
    assert len({case.name for case in CASES}) == len(CASES)


def ask(client: APIClient, case: Case, world: World):
    data = case.data(world)
    return client.generic(case.method, case.url(world), data=json.dumps(data) if data is not None else "",
                          content_type="application/json")


def returned_ids(case: Case, body: dict) -> set[str] | None:
    """The memory ids a list-like answer holds (None for other endpoints)."""
    if case.name == "memories.list":
        return {m["id"] for m in body["results"]}
    if case.name == "recall":
        return {m["id"] for m in body["data"]["ranked_memory_list"]}
    if case.name == "context_packs":
        return {m["id"] for m in body["json"]["items"]}
    return None


def content_problems(case: Case, persona: str, world: World, response) -> list[str]:
    """What is wrong with a successful answer's content for this persona."""
    persona = column(persona)
    body = response.json() if response.content else None
    problems = []
    ids = returned_ids(case, body) if body is not None else None
    if ids is not None:
        expected = {world.id(name) for name in VISIBLE_TO[persona]}
        if ids != expected:
            names = {name for name, memory in world.memories.items() if memory.pk in ids}
            problems.append(f"returned {sorted(names)}, expected {sorted(VISIBLE_TO[persona])}")
    # No answer (a list, a conflict, a follow-up, an audit event) names a memory the
    # persona may not see. The archived memory is readable, just not listed by default.
    readable = VISIBLE_TO[persona] | ({"archived"} if "gov-space" in SPACES_TO[persona] else set())
    leaked = sorted(name for name in set(world.memories) - readable
                    if world.id(name) in response.content.decode())
    if leaked:
        problems.append(f"mentions hidden memories {leaked}")
    if case.name == "spaces.list":
        slugs = {s["slug"] for s in body["results"]}
        if slugs != SPACES_TO[persona]:
            problems.append(f"listed spaces {sorted(slugs)}, expected {sorted(SPACES_TO[persona])}")
    if case.name == "members.list":
        principals = {m["principal"] for m in body}
        if principals != MEMBERS:
            problems.append(f"listed members {sorted(principals)}")
    if case.name == "memories.bulk":
        created = body["created"]
        if created != (1 if response.status_code == 201 else 0):
            problems.append(f"bulk created {created} rows with status {response.status_code}")
        if response.status_code == 200:
            # A refused row tells a reader it may not write, and a non-reader only what it
            # would hear of a space that does not exist.
            error = body["results"][0]["errors"]["space"][0]
            wanted = ("You may not add memories to space 'gov-space'."
                      if "gov-space" in SPACES_TO[persona] else "No space 'gov-space'.")
            if error != wanted:
                problems.append(f"bulk row error {error!r}, expected {wanted!r}")
    return problems


@pytest.mark.parametrize("persona", [*COLUMNS, *ANSWERED_AS])
def test_each_endpoint_answers_a_persona_as_its_role_allows(world, persona):
    """Given one world, when the persona calls every endpoint, then each status, each list's
    content and each write's effect follow the rules."""
    client, user = persona_client(world, persona)
    mismatches: list[str] = []
    for case in CASES:
        expected = case.status_for(persona)
        with transaction.atomic():
            before = case.probe(world, user) if case.probe else None
            response = ask(client, case, world)
            after = case.probe(world, user) if case.probe else None
            transaction.set_rollback(True)
        if response.status_code != expected:
            mismatches.append(f"{case.name}: {response.status_code}, expected {expected} "
                              f"({response.content[:160]!r})")
            continue
        # Bulk answers 200 when every row failed, and writes only when it answers 201.
        writes = expected == 201 if case.name == "memories.bulk" else 200 <= expected < 300
        if case.probe and (before != after) != writes:
            mismatches.append(f"{case.name}: {'changed' if before != after else 'left'} the store "
                              f"({before!r} -> {after!r}) with status {expected}")
        if 200 <= expected < 300:
            mismatches.extend(f"{case.name}: {p}" for p in content_problems(case, persona, world, response))
        if expected in (401, 403, 404):
            error = response.json().get("error", {})
            code = {401: "not_authenticated", 403: "forbidden", 404: "not_found"}[expected]
            if error.get("code") != code:
                mismatches.append(f"{case.name}: error code {error.get('code')!r}, expected {code!r}")
    assert not mismatches, "\n".join(mismatches)


# --- edges where a hidden memory could have leaked ---------------------------------------

def test_superseded_by_does_not_reveal_that_a_hidden_memory_exists(world):
    """Given a contributor and a memory tagged with a tag restricted to curators, when the
    contributor points its own memory's superseded_by at it, then SAM answers exactly as it
    does for an id that does not exist."""
    client = client_for(world.users["contributor"])
    own = world.memories["contributors"]

    def point_at(target: str):
        return client.patch(f"/api/v1/memories/{own.pk}/",
                            {"version": own.version, "superseded_by": target}, format="json")

    missing = point_at("mem_no_such_memory")
    hidden = point_at(world.id("hr"))

    assert missing.status_code == 400
    assert hidden.status_code == 400, hidden.content
    assert hidden.json()["error"]["fields"] == {
        "superseded_by": [f"No memory '{world.id('hr')}' in space 'gov-space'."]}


def test_a_visible_memory_does_not_name_a_hidden_successor(world):
    """Given a memory superseded by one restricted to owners, when a viewer reads the first,
    then nothing in the answer names the hidden one."""
    memory_services.memory_update(actor=SYSTEM, memory_id=world.id("open"),
                                  expected_version=world.memories["open"].version,
                                  changes={"superseded_by": world.id("owner_only")})
    client = client_for(world.users["viewer"])

    detail = client.get(f"/api/v1/memories/{world.id('open')}/")
    listed = client.get("/api/v1/memories/")

    assert detail.status_code == listed.status_code == 200
    assert world.id("owner_only") not in detail.content.decode()
    assert world.id("owner_only") not in listed.content.decode()


def test_a_contributor_adding_a_memory_with_a_restricted_tag_is_told_it_was_stored(world):
    """Given a tag restricted to curators, when a contributor adds a memory carrying it, then
    the memory is stored once and the answer says so (201), not 404."""
    client = client_for(world.users["contributor"])
    before = space_memory_count(world, None)

    response = client.post("/api/v1/memories/", {**new_memory(world), "tags": ["hr"]}, format="json")

    assert space_memory_count(world, None) == before + 1
    assert response.status_code == 201, response.content


def test_a_deleted_memory_stays_hidden_in_the_space_timeline(world):
    """Given a memory tagged with a tag restricted to curators, when a curator deletes it,
    then the auditor's space timeline still shows nothing of what it said."""
    client = client_for(world.users["auditor"])
    timeline = f"/api/v1/spaces/{world.space.slug}/timeline/?page_size=500"
    title = world.memories["hr"].title
    assert title not in client.get(timeline).content.decode()

    curator = client_for(world.users["curator"])
    assert curator.delete(f"/api/v1/memories/{world.id('hr')}/").status_code == 204
    response = client.get(timeline)

    assert response.status_code == 200
    assert title not in response.content.decode()
