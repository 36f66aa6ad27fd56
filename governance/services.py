"""Memberships, restricted tags and per-memory restrictions.

Every grant and revoke goes through here, so the guardian permissions, the membership
rows and the audit log never disagree.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from guardian.shortcuts import assign_perm, remove_perm

from core.actor import Actor
from core.errors import InvalidInput, NotFound
from core.signals import announce_change
from governance import access, policy, roles
from governance.audit.services import audit_record
from governance.models import RestrictedTag, SpaceMembership, UserMemorySettings
from governance.modes import Mode

# Tokens are issued and revoked in governance.tokens; named here too for the many callers
# (commands, benchmarks, tests) that issue one as set-up.
from governance.tokens import api_token_issue as api_token_issue
from governance.tokens import api_token_revoke as api_token_revoke
from governance.tokens import api_token_set_expiry as api_token_set_expiry

# --- memberships ----------------------------------------------------------------------

def _principal(user, group) -> dict:
    if (user is None) == (group is None):
        raise InvalidInput("Name a user or a group.", fields={"user": ["Give a user or a group."]})
    return {"user": user} if user is not None else {"group": group}


def _sync_perms(space, principal: AbstractBaseUser | Group, *, old: str | None, new: str | None) -> None:
    before = roles.ROLE_PERMISSIONS[old] if old else frozenset()
    after = roles.ROLE_PERMISSIONS[new] if new else frozenset()
    for codename in sorted(before - after):
        remove_perm(f"{space._meta.app_label}.{codename}", principal, space)
    for codename in sorted(after - before):
        assign_perm(f"{space._meta.app_label}.{codename}", principal, space)


@transaction.atomic
def membership_grant(*, actor: Actor, space, role: str, user=None, group=None) -> SpaceMembership:
    """Give a user or group `role` in `space` (replacing any role they held there)."""
    if role not in roles.Role.values:
        raise InvalidInput("Unknown role.", fields={"role": [f"One of {', '.join(roles.Role.values)}."]})
    who = _principal(user, group)
    membership = SpaceMembership.objects.select_for_update().filter(space=space, **who).first()
    old_role = membership.role if membership else None
    if old_role == role:
        assert membership is not None  # old_role came from it, and role is never None
        return membership
    if membership is None:
        membership = SpaceMembership(space=space, **who)
    membership.role = role
    membership.granted_by = access.user_or_none(actor)
    membership.save()
    _sync_perms(space, user or group, old=old_role, new=role)
    audit_record("grant", actor=actor, space=space, target=membership,
                 before={"role": old_role} if old_role else None,
                 after={"principal": membership.principal, "role": role})
    access.forget_rights()
    return membership


@transaction.atomic
def membership_revoke(*, actor: Actor, space, user=None, group=None) -> bool:
    who = _principal(user, group)
    membership = SpaceMembership.objects.select_for_update().filter(space=space, **who).first()
    if membership is None:
        return False
    _sync_perms(space, user or group, old=membership.role, new=None)
    audit_record("revoke", actor=actor, space=space, target=membership,
                 before={"principal": membership.principal, "role": membership.role})
    membership.delete()
    access.forget_rights()
    return True


# --- restrictions ---------------------------------------------------------------------

@transaction.atomic
def restricted_tag_set(*, actor: Actor, space, tag: str, min_role: str) -> RestrictedTag:
    if min_role not in [r.value for r in roles.RESTRICTABLE_TO]:
        raise InvalidInput("Invalid role.", fields={"min_role": [
            f"One of {', '.join(r.value for r in roles.RESTRICTABLE_TO)}."]})
    tag = tag.strip().lower()
    if not tag:
        raise InvalidInput("Invalid tag.", fields={"tag": ["This field may not be blank."]})
    row = RestrictedTag.objects.select_for_update().filter(space=space, tag=tag).first()
    if row is not None and row.min_role == min_role:
        return row  # nothing changed, so nothing to audit or announce
    before = {"restricted_tag": tag, "min_role": row.min_role} if row is not None else None
    if row is None:
        row = RestrictedTag(space=space, tag=tag)
    row.min_role = min_role
    row.save()
    audit_record("grant", actor=actor, space=space, target=row, before=before,
                 after={"restricted_tag": tag, "min_role": min_role})
    _announce(space)
    access.forget_rights()
    return row


@transaction.atomic
def restricted_tag_remove(*, actor: Actor, space, tag: str) -> bool:
    deleted, _ = RestrictedTag.objects.filter(space=space, tag=tag.strip().lower()).delete()
    if deleted:
        audit_record("revoke", actor=actor, space=space, target_type="restrictedtag", target_id=tag,
                     before={"restricted_tag": tag})
        _announce(space)
        access.forget_rights()
    return bool(deleted)


def _announce(space) -> None:
    # Cached recall answers may hold memories whose visibility just changed.
    announce_change([space.pk])


# --- modes ----------------------------------------------------------------------------

@transaction.atomic
def user_mode_get(*, user) -> str:
    """`user`'s own memory mode (assist until they set one)."""
    row = UserMemorySettings.objects.filter(user=user).first()
    return row.mode if row else Mode.ASSIST


def user_mode_set(*, actor: Actor, user, mode: str) -> UserMemorySettings:
    if mode not in Mode.values:
        raise InvalidInput("Unknown mode.", fields={"mode": [f"One of {', '.join(Mode.values)}."]})
    settings_row, _ = UserMemorySettings.objects.get_or_create(user=user)
    if settings_row.mode != mode:
        before = settings_row.mode
        settings_row.mode = mode
        settings_row.save()
        # The mode read for this request (governance.policy) is the old one.
        policy.remember_user_mode(user, mode)
        audit_record("mode_change", actor=actor, target_type="user", target_id=str(user.pk),
                     before={"mode": before}, after={"mode": mode})
    return settings_row


def user_lookup(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user '{username}'.")
    return user
