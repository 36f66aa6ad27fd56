"""Roles in a space, what each may do, and how they rank.

A role is a named bundle of django-guardian object permissions on a Space. Granting a
role assigns its permissions (to a user or a group); the gateway (governance.access)
checks permissions, never role names, so a custom grant of single permissions works too.
"""

from __future__ import annotations

from django.db import models

# The permissions are declared with the Space model; roles bundle them. Re-exported, so the
# gateway and the services name every right through this module.
from core.choices import PERM_AUDIT as PERM_AUDIT
from core.choices import PERM_CURATE as PERM_CURATE
from core.choices import PERM_EDIT_ANY as PERM_EDIT_ANY
from core.choices import PERM_MANAGE as PERM_MANAGE
from core.choices import PERM_READ as PERM_READ
from core.choices import PERM_WRITE as PERM_WRITE
from core.choices import SPACE_PERMISSIONS as SPACE_PERMISSIONS


class Role(models.TextChoices):
    OWNER = "owner"
    CURATOR = "curator"
    CONTRIBUTOR = "contributor"
    AUDITOR = "auditor"
    VIEWER = "viewer"


ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.VIEWER: frozenset({PERM_READ}),
    Role.AUDITOR: frozenset({PERM_READ, PERM_AUDIT}),
    Role.CONTRIBUTOR: frozenset({PERM_READ, PERM_WRITE}),
    Role.CURATOR: frozenset({PERM_READ, PERM_WRITE, PERM_EDIT_ANY, PERM_CURATE, PERM_AUDIT}),
    Role.OWNER: frozenset({code for code, _ in SPACE_PERMISSIONS}),
}

# Restricted tags and restricted memories name the lowest role that may see them.
# Auditors see what viewers see: they read history, they are not trusted with more.
RANK: dict[str, int] = {
    Role.VIEWER: 1, Role.AUDITOR: 1, Role.CONTRIBUTOR: 2, Role.CURATOR: 3, Role.OWNER: 4,
}
RESTRICTABLE_TO = (Role.CONTRIBUTOR, Role.CURATOR, Role.OWNER)
NO_RESTRICTION = 0


def rank_of_permissions(perms: frozenset[str] | set[str]) -> int:
    """The rank a set of space permissions earns: that of the highest role it covers."""
    best = 0
    for role, needed in ROLE_PERMISSIONS.items():
        if needed <= perms:
            best = max(best, RANK[role])
    return best


def role_for_rank(rank: int) -> str | None:
    """The role a visibility rank names (None for no restriction)."""
    for role in RESTRICTABLE_TO:
        if RANK[role] == rank:
            return role.value
    return None
