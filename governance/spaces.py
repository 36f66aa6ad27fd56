"""Spaces: create and change them (the tenancy root, core.Space).

A space is where governance starts: creating one makes its first data key, its owner's
membership and its first audit record; changing one may change what its members see
(mode, retention), so caches hear of it. Forgetting and deleting a space are in
governance.retention.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db import transaction

from core.actor import Actor
from core.errors import Conflict, Forbidden, TooManyAttempts
from core.models import Space
from core.signals import announce_change
from governance import access, privacy
from governance.audit.services import audit_record
from governance.roles import Role
from governance.services import membership_grant

SPACE_SETTINGS = ("name", "kind", "description", "mode", "retention_days", "prune_decayed",
                  "note_cap", "high_idle_days", "duplicate_policy", "near_duplicate_policy",
                  "supersession_policy", "capture_sources", "redaction_allowlist")


@transaction.atomic
def space_create(*, actor: Actor, slug: str, name: str, kind: str, description: str = "",
                 **options: Any) -> Space:
    """Create a space; a user who creates one becomes its owner.

    Raises Forbidden for a token narrowed to named spaces or capped below owner
    (governance.access.can_create_spaces), Conflict for a slug that is taken (whether
    the caller can see that space or not) and TooManyAttempts for a user refused
    SLUG_REFUSALS_PER_HOUR times within the hour.
    """
    if not access.can_create_spaces(actor):
        raise Forbidden("This token is limited to named spaces or to a role below owner, "
                        "so it may not create spaces.")
    refusals = _slug_refusals_key(actor)
    if refusals is not None and (cache.get(refusals) or 0) >= SLUG_REFUSALS_PER_HOUR:
        raise TooManyAttempts("Too many slugs that are not available were tried; try again later.")
    if Space.objects.filter(slug=slug).exists():
        _count_slug_refusal(refusals)
        raise Conflict("This slug is not available; choose another.", fields={"slug": ["Not available."]})
    space = Space(slug=slug, name=name.strip(), kind=kind, description=description.strip())
    _set_space_options(space, options)
    _redact_description(space)
    space.full_clean()
    space.save()
    audit_record("create", actor=actor, space=space, target=space, after=_space_state(space))
    if access.user_or_none(actor) is not None:
        membership_grant(actor=actor, space=space, user=actor, role=Role.OWNER)
    # Superusers (and SYSTEM) hold every space: their memoised rights lack this one.
    access.forget_rights()
    return space


# A slug names one space for the whole install, so whether a slug is taken is something
# anyone who may create spaces can learn by trying it. The refusal says no more than that,
# in the same words for a space the caller can see and one it cannot, and a user refused
# this often within an hour may not create spaces until the hour is over, so hidden slugs
# cannot be guessed by the thousand (docs/security.md, "What a caller can learn by probing").
# Counted in the default cache: per web process unless SAM_CACHE_URL names a shared one.
SLUG_REFUSALS_PER_HOUR = 20


def _slug_refusals_key(actor: Actor) -> str | None:
    user = access.user_or_none(actor)
    return f"sam:slug-refusals:{user.pk}" if user is not None else None


def _count_slug_refusal(key: str | None) -> None:
    if key is None:
        return
    # add() starts the hour at the first refusal; incr() never moves it.
    cache.add(key, 0, timeout=3600)
    try:
        cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.set(key, 1, timeout=3600)


@transaction.atomic
def space_update(*, actor: Actor, slug: str, changes: dict[str, Any]) -> Space:
    space = access.access_space(actor, slug=slug, action="manage")
    before = _space_state(space)
    _set_space_options(space, changes)
    if "description" in changes:
        _redact_description(space)
    space.full_clean()
    space.save()
    after = _space_state(space)
    if after != before:
        action = "mode_change" if before["mode"] != after["mode"] else "edit"
        audit_record(action, actor=actor, space=space, target=space, before=before, after=after)
        announce_change([space.pk])
    return space


def _set_space_options(space: Space, changes: dict[str, Any]) -> None:
    for name in SPACE_SETTINGS:
        if name in changes:
            value = changes[name]
            if name in ("redaction_allowlist", "capture_sources"):
                value = sorted({str(v).strip() for v in value if str(v).strip()})
            setattr(space, name, value.strip() if isinstance(value, str) else value)


def _redact_description(space: Space) -> None:
    """A description is free text like a memory's: redacted, then sealed by the model."""
    values = {"description": space.description or ""}
    privacy.redact_fields(values, fields=["description"], allowlist=space.redaction_allowlist)
    space.description = values["description"]


def _space_state(space: Space) -> dict[str, Any]:
    return {name: getattr(space, name) for name in SPACE_SETTINGS}
