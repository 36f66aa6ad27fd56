"""Roles in a space, what each may do, and how they rank.

A role is a named bundle of django-guardian object permissions on a Space. Granting a
role assigns its permissions (to a user or a group); the gateway (governance.access)
checks permissions, never role names, so a custom grant of single permissions works too.
"""

from __future__ import annotations

from django.db import models


class Role(models.TextChoices):
    OWNER = "owner"
    CURATOR = "curator"
    CONTRIBUTOR = "contributor"
    AUDITOR = "auditor"
    VIEWER = "viewer"


# Object permissions on memories.Space (declared in Space.Meta.permissions).
PERM_READ = "space_read"          # see memories, recall, context packs, versions
PERM_WRITE = "space_write"        # add memories, edit your own
PERM_EDIT_ANY = "space_edit_any"  # edit anyone's memories
PERM_CURATE = "space_curate"      # archive, restore, delete, merge, restrict, resolve conflicts
PERM_AUDIT = "space_audit"        # read the audit timeline
PERM_MANAGE = "space_manage"      # members, roles, restricted tags, mode, retention, forget

SPACE_PERMISSIONS = (
    (PERM_READ, "Read memories and recall"),
    (PERM_WRITE, "Add memories and edit own"),
    (PERM_EDIT_ANY, "Edit any memory"),
    (PERM_CURATE, "Archive, restore, delete, merge and restrict memories"),
    (PERM_AUDIT, "Read the audit timeline"),
    (PERM_MANAGE, "Manage members, roles, restricted tags, mode and retention"),
)

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


def role_of_permissions(perms: frozenset[str] | set[str]) -> str | None:
    """The highest role whose permissions are all in `perms` (None below viewer)."""
    for role in (Role.OWNER, Role.CURATOR, Role.CONTRIBUTOR, Role.AUDITOR, Role.VIEWER):
        if ROLE_PERMISSIONS[role] <= perms:
            return role
    return None


def role_for_rank(rank: int) -> str | None:
    """The role a visibility rank names (None for no restriction)."""
    for role in RESTRICTABLE_TO:
        if RANK[role] == rank:
            return role.value
    return None
