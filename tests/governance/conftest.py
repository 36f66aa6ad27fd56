"""Governance fixtures: one space with every role, memories hidden in each way, real tokens."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache

from core.models import Space
from governance.access import SYSTEM
from governance.roles import Role
from governance.services import restricted_tag_set
from memories import services as memory_services
from memories.models import Memory
from memories.restrictions import memory_grant_view, memory_restrict
from tests.factories import SpaceFactory, UserFactory, make_memory

ROLES = ("owner", "curator", "contributor", "auditor", "viewer")
PERSONAS = (*ROLES, "stranger", "anonymous")


def memory_data(title: str, *, tags: list[str]) -> dict:
    return {
        "title": title,
        "content": f"{title}: a note kept for the governance tests of SAM.",
        "tags": tags,
        "canonical_phrases": [title.lower()],
    }


@dataclass
class World:
    """A space holding one user per role, a curator through a group, a stranger, a
    superuser who holds no role, and memories hidden in every way.

    memories:
      open          no restriction, written by SAM itself, edited once (now version 2)
      contributors  written by the contributor, who edited it once (version 2)
      hr            tagged "hr", a tag restricted to curators and up
      contrib_only  restricted to contributors and up
      owner_only    restricted to owners
      granted       restricted to owners, granted one by one to the viewer and the stranger
      archived      no restriction, archived
      elsewhere     in `other`, a second space that only the owner reads
    """

    space: Space
    other: Space
    users: dict[str, object]
    memories: dict[str, Memory] = field(default_factory=dict)

    def id(self, name: str) -> str:
        return self.memories[name].pk


# Which memories of the world each persona reads (active ones; `archived` is never listed).
VISIBLE: dict[str, set[str]] = {
    "owner": {"open", "contributors", "hr", "contrib_only", "owner_only", "granted", "elsewhere"},
    "curator": {"open", "contributors", "hr", "contrib_only"},
    "contributor": {"open", "contributors", "contrib_only"},
    "auditor": {"open", "contributors"},
    "viewer": {"open", "contributors", "granted"},
    "stranger": set(),
}


@pytest.fixture
def world(db) -> World:
    return build_world()


def build_world() -> World:
    """The World (for a fixture of any scope: the caller holds the database open)."""
    cache.clear()
    users = {role: UserFactory(username=f"gov-{role}") for role in ROLES}
    users["stranger"] = UserFactory(username="gov-stranger")
    users["newcomer"] = UserFactory(username="gov-newcomer")
    users["member"] = UserFactory(username="gov-member")
    users["curator@group"] = UserFactory(username="gov-group-curator")
    users["superuser"] = UserFactory(username="gov-superuser", is_superuser=True)
    curators = Group.objects.create(name="gov-curators")
    users["curator@group"].groups.add(curators)
    space = SpaceFactory(
        slug="gov-space", kind="user",
        members={**{users[role]: role for role in ROLES}, users["member"]: Role.VIEWER,
                 curators: Role.CURATOR},
    )
    other = SpaceFactory(slug="gov-other", members={users["owner"]: Role.OWNER})
    restricted_tag_set(actor=SYSTEM, space=space, tag="hr", min_role=Role.CURATOR)

    found = World(space=space, other=other, users=users)
    found.memories["open"] = make_memory(space, **memory_data("Open deployment checklist", tags=["ops"]))
    memory_services.memory_update(actor=SYSTEM, memory_id=found.id("open"), expected_version=1,
                                  changes={"title": "Open release checklist"})
    written = memory_services.memory_create(
        actor=users["contributor"],
        data={"space": space.slug, **memory_data("Contributor build notes", tags=["build"])},
    ).instance
    found.memories["contributors"] = written
    memory_services.memory_update(actor=users["contributor"], memory_id=written.pk, expected_version=1,
                                  changes={"title": "Contributor release notes"})
    found.memories["hr"] = make_memory(space, **memory_data("Salary review calendar", tags=["hr", "ops"]))
    for name, min_role in (("contrib_only", Role.CONTRIBUTOR), ("owner_only", Role.OWNER),
                           ("granted", Role.OWNER)):
        memory = make_memory(space, **memory_data(f"Restricted {name} roadmap", tags=["plans"]))
        memory_restrict(actor=SYSTEM, memory_id=memory.pk, min_role=min_role)
        found.memories[name] = memory
    for grantee in ("viewer", "stranger"):
        memory_grant_view(actor=SYSTEM, memory_id=found.id("granted"), user=users[grantee])
    archived = make_memory(space, **memory_data("Archived onboarding guide", tags=["ops"]))
    memory_services.memory_archive(actor=SYSTEM, memory_id=archived.pk)
    found.memories["archived"] = archived
    found.memories["elsewhere"] = make_memory(other, **memory_data("Elsewhere hiring plan", tags=["hr"]))
    # As stored now (versions, restrictions and archive flags were set after creation).
    found.memories = {name: Memory.objects.with_related().get(pk=memory.pk)
                      for name, memory in found.memories.items()}
    return found
