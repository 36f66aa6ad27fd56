"""Factories for the test suite. Memories are made through the services, as users make them."""

from __future__ import annotations

from typing import Any

import factory
from django.contrib.auth import get_user_model

from core.models import Space, SpaceKind
from governance.access import SYSTEM
from memories import services
from memories.models import Memory


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests")


class SpaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Space
        django_get_or_create = ("slug",)
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"space-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())
    kind = SpaceKind.PROJECT

    @factory.post_generation
    def members(space: Space, create: bool, extracted: dict | None, **kwargs: Any) -> None:
        """SpaceFactory(members={user_or_group: "curator"}) grants roles through the service."""
        from django.contrib.auth.models import Group

        from governance.services import membership_grant

        for principal, role in (extracted or {}).items():
            who = {"group": principal} if isinstance(principal, Group) else {"user": principal}
            membership_grant(actor=SYSTEM, space=space, role=role, **who)


def make_memory(space: Space, **fields: Any) -> Memory:
    data = {
        "space": space.slug,
        "title": "Prefer pytest fixtures",
        # Named after its title, so memories that differ by title are not duplicates (a
        # repeated text would reinforce the memory stored instead of adding one).
        "content": (f"{fields['title']}: " if "title" in fields else "")
        + "Write tests as pytest functions with fixtures instead of unittest setUp methods.",
        **fields,
    }
    memory = services.memory_create(actor=SYSTEM, data=data).instance
    return Memory.objects.with_related().get(pk=memory.pk)
