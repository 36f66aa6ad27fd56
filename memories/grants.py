"""Memories granted to a user one by one (guardian's `view_memory`, kept in MemoryUserGrant
and MemoryGroupGrant). The gateway asks here through the registration in memories.apps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from memories.models import MemoryGroupGrant, MemoryUserGrant

VIEW_PERMISSION = "view_memory"


def granted_memory_ids(user, readable_space_ids: set[int]) -> Iterable[str]:
    """Ids of the memories granted to `user` (directly or through a group) in those spaces.

    Grants are real foreign keys, deleted with their memory, so every id names a memory
    that exists.
    """
    direct, via_groups = _grants(user, content_object__space_id__in=list(readable_space_ids))
    return direct.values_list("content_object_id", flat=True).union(
        via_groups.values_list("content_object_id", flat=True))


def holds_any_grant(user) -> bool:
    """Whether any memory is granted to `user`, directly or through a group, in any space."""
    return any(grants.exists() for grants in _grants(user))


def _grants(user, **wanted: Any) -> tuple[QuerySet, QuerySet]:
    """The view grants of `user`: its own, and its groups'."""
    wanted["permission__codename"] = VIEW_PERMISSION
    return (MemoryUserGrant.objects.filter(user=user, **wanted),
            MemoryGroupGrant.objects.filter(group__in=user.groups.all(), **wanted))
