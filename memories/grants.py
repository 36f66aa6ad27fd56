"""Memories granted to a user one by one (guardian's `view_memory`, kept in MemoryUserGrant
and MemoryGroupGrant). The gateway asks here through the registration in memories.apps."""

from __future__ import annotations

from collections.abc import Iterable

from memories.models import MemoryGroupGrant, MemoryUserGrant

VIEW_PERMISSION = "view_memory"


def granted_memory_ids(user, readable_space_ids: set[int]) -> Iterable[str]:
    """Ids of the memories granted to `user` (directly or through a group) in those spaces.

    Grants are real foreign keys, deleted with their memory, so every id names a memory
    that exists.
    """
    wanted = {"permission__codename": VIEW_PERMISSION,
              "content_object__space_id__in": list(readable_space_ids)}
    direct = MemoryUserGrant.objects.filter(user=user, **wanted).values_list("content_object_id", flat=True)
    via_groups = (MemoryGroupGrant.objects.filter(group__in=user.groups.all(), **wanted)
                  .values_list("content_object_id", flat=True))
    return direct.union(via_groups)


def holds_any_grant(user) -> bool:
    """Whether any memory is granted to `user`, directly or through a group, in any space."""
    return (MemoryUserGrant.objects.filter(user=user, permission__codename=VIEW_PERMISSION).exists()
            or MemoryGroupGrant.objects.filter(group__in=user.groups.all(),
                                               permission__codename=VIEW_PERMISSION).exists())
