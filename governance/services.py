"""Tokens, memberships, restricted tags and per-memory restrictions.

Every grant and revoke goes through here, so the guardian permissions, the membership
rows and the audit log never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone
from guardian.shortcuts import assign_perm, remove_perm

from governance import access, policy, privacy, roles
from governance.models import (
    ApiToken,
    RestrictedTag,
    SpaceMembership,
    UserMemorySettings,
    generate_token,
    hash_token,
)
from governance.modes import WriteOutcome
from samsite.api.errors import InvalidInput, NotFound


def _audit(action: str, **kwargs) -> None:
    from governance.audit.services import audit_record

    audit_record(action, **kwargs)


# --- tokens ---------------------------------------------------------------------------

@transaction.atomic
def api_token_issue(*, user: AbstractBaseUser, name: str, expires_at: datetime | None = None,
                    spaces: Iterable = (), role: str = "", actor=None) -> tuple[ApiToken, str]:
    """Create a token for `user`. Returns the row and the plaintext, which is not stored.

    `spaces` and `role` narrow what the token may do below its user's own rights. A token
    issued with no spaces works in all of its user's spaces (`all_spaces`); one issued
    with spaces works only in them, and in none once they are all deleted.
    """
    if role and role not in roles.Role.values:
        raise InvalidInput("Unknown role.", fields={"role": [f"One of {', '.join(roles.Role.values)}."]})
    spaces = list(spaces)
    raw = generate_token()
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:10], key_hash=hash_token(raw), expires_at=expires_at,
        role=role, all_spaces=not spaces,
    )
    token.spaces.set(spaces)
    _audit("token_issue", actor=actor or access.SYSTEM, target=token,
           after={"user": user.get_username(), "name": name, "role": role,
                  "all_spaces": token.all_spaces, "spaces": sorted(s.slug for s in spaces),
                  "expires_at": expires_at.isoformat() if expires_at else None})
    access.forget_rights()
    return token, raw


@transaction.atomic
def api_token_set_expiry(*, token: ApiToken, expires_at: datetime | None, actor=None) -> ApiToken:
    """Change when a token stops working (None: never). Audited as an edit of the token."""
    locked = ApiToken.objects.select_for_update().get(pk=token.pk)
    if locked.expires_at != expires_at:
        before = locked.expires_at
        locked.expires_at = expires_at
        locked.save(update_fields=["expires_at"])
        _audit("edit", actor=actor or access.SYSTEM, target=locked,
               before={"expires_at": before.isoformat() if before else None},
               after={"expires_at": expires_at.isoformat() if expires_at else None})
        access.forget_rights()
    token.expires_at = locked.expires_at
    return locked


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor=None) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        _audit("token_revoke", actor=actor or access.SYSTEM, target=token,
               after={"user": token.user.get_username(), "name": token.name})
        access.forget_rights()
    return token


# --- memberships ----------------------------------------------------------------------

def _principal(user, group) -> dict:
    if (user is None) == (group is None):
        raise InvalidInput("Name a user or a group.", fields={"user": ["Give a user or a group."]})
    return {"user": user} if user is not None else {"group": group}


def _sync_perms(space, principal: AbstractBaseUser | Group, *, old: str | None, new: str | None) -> None:
    before = roles.ROLE_PERMISSIONS[old] if old else frozenset()
    after = roles.ROLE_PERMISSIONS[new] if new else frozenset()
    for codename in sorted(before - after):
        remove_perm(f"memories.{codename}", principal, space)
    for codename in sorted(after - before):
        assign_perm(f"memories.{codename}", principal, space)


@transaction.atomic
def membership_grant(*, actor, space, role: str, user=None, group=None) -> SpaceMembership:
    """Give a user or group `role` in `space` (replacing any role they held there)."""
    if role not in roles.Role.values:
        raise InvalidInput("Unknown role.", fields={"role": [f"One of {', '.join(roles.Role.values)}."]})
    who = _principal(user, group)
    membership = SpaceMembership.objects.select_for_update().filter(space=space, **who).first()
    old_role = membership.role if membership else None
    if old_role == role:
        return membership
    if membership is None:
        membership = SpaceMembership(space=space, **who)
    membership.role = role
    membership.granted_by = access.user_or_none(actor)
    membership.save()
    _sync_perms(space, user or group, old=old_role, new=role)
    _audit("grant", actor=actor, space=space, target=membership,
           before={"role": old_role} if old_role else None,
           after={"principal": membership.principal, "role": role})
    access.forget_rights()
    return membership


@transaction.atomic
def membership_revoke(*, actor, space, user=None, group=None) -> bool:
    who = _principal(user, group)
    membership = SpaceMembership.objects.select_for_update().filter(space=space, **who).first()
    if membership is None:
        return False
    _sync_perms(space, user or group, old=membership.role, new=None)
    _audit("revoke", actor=actor, space=space, target=membership,
           before={"principal": membership.principal, "role": membership.role})
    membership.delete()
    access.forget_rights()
    return True


# --- restrictions ---------------------------------------------------------------------

@transaction.atomic
def restricted_tag_set(*, actor, space, tag: str, min_role: str) -> RestrictedTag:
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
    _audit("grant", actor=actor, space=space, target=row, before=before,
           after={"restricted_tag": tag, "min_role": min_role})
    _announce(space)
    access.forget_rights()
    return row


@transaction.atomic
def restricted_tag_remove(*, actor, space, tag: str) -> bool:
    deleted, _ = RestrictedTag.objects.filter(space=space, tag=tag.strip().lower()).delete()
    if deleted:
        _audit("revoke", actor=actor, space=space, target_type="restrictedtag", target_id=tag,
               before={"restricted_tag": tag})
        _announce(space)
        access.forget_rights()
    return bool(deleted)


@transaction.atomic
def memory_restrict(*, actor, memory_id: str, min_role: str | None, reason: str = ""):
    """Hide one memory from roles below `min_role` (None lifts the restriction).

    A write like any other: a paused or off space (or user) refuses it (409), and in
    incognito the answer shows the change while nothing is kept.
    """
    Memory = apps.get_model("memories", "Memory")
    memory = access.access_object(Memory.objects.select_for_update(of=("self",)).select_related("space"),
                                  actor, pk=memory_id, action="curate", label="memory")
    outcome = policy.write_outcome(actor, memory.space)
    if min_role is not None and min_role not in [r.value for r in roles.RESTRICTABLE_TO]:
        raise InvalidInput("Invalid role.", fields={"restricted_to": [
            f"One of {', '.join(r.value for r in roles.RESTRICTABLE_TO)}, or null."]})
    rank = roles.RANK[min_role] if min_role else roles.NO_RESTRICTION
    if memory.visibility_rank != rank:
        before = memory.visibility_rank
        Memory.objects.filter(pk=memory.pk).update(visibility_rank=rank)
        memory.visibility_rank = rank
        # The reason is free text about the memory, and the log is append-only: like every
        # memory event it keeps a keyed fingerprint of the (redacted) reason, not the text,
        # so neither the words nor the personal data in them outlive the memory.
        _audit("restrict", actor=actor, space=memory.space, target=memory,
               before={"visibility_rank": before}, after={"visibility_rank": rank},
               note=privacy.redact_value(reason.strip(), path="reason", report=[]), digest_text=True)
        _announce(memory.space)
        access.forget_rights()
        if outcome is WriteOutcome.DISCARD:
            # Incognito: the caller sees the answer; the surrounding atomic block rolls back.
            transaction.set_rollback(True)
            memory.persisted = False
    return memory


@transaction.atomic
def memory_grant_view(*, actor, memory_id: str, user, revoke: bool = False):
    """Let one user see one restricted memory (or take that back)."""
    Memory = apps.get_model("memories", "Memory")
    memory = access.access_object(Memory.objects.select_related("space"), actor, pk=memory_id,
                                  action="curate", label="memory")
    # Guardian keeps the grant in governance.MemoryUserGrant (a foreign key to the memory),
    # so it is deleted with the memory and never passes to a later memory with the same id.
    (remove_perm if revoke else assign_perm)(f"memories.{access.MEMORY_VIEW_PERMISSION}", user, memory)
    _audit("revoke" if revoke else "grant", actor=actor, space=memory.space, target=memory,
           after={"view_memory": user.get_username()})
    access.forget_rights()
    return memory


def _announce(space) -> None:
    # Cached recall answers may hold memories whose visibility just changed.
    from memories.services import announce_change

    announce_change([space.pk])


# --- modes ----------------------------------------------------------------------------

@transaction.atomic
def user_mode_set(*, actor, user, mode: str) -> UserMemorySettings:
    from governance.modes import Mode

    if mode not in Mode.values:
        raise InvalidInput("Unknown mode.", fields={"mode": [f"One of {', '.join(Mode.values)}."]})
    settings_row, _ = UserMemorySettings.objects.get_or_create(user=user)
    if settings_row.mode != mode:
        before = settings_row.mode
        settings_row.mode = mode
        settings_row.save()
        _audit("mode_change", actor=actor, target_type="user", target_id=str(user.pk),
               before={"mode": before}, after={"mode": mode})
    return settings_row


def user_lookup(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user '{username}'.")
    return user
