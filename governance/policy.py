"""The memory-mode policy that applies to one actor in one space.

Writes and recall ask here before touching the store, and a write asks again once done
whether what it wrote is kept (incognito keeps nothing); see governance.modes for what each
mode allows and how a space's mode and a user's mode combine.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from core.actor import Actor
from core.errors import ModeRefusesWrites
from governance.access import user_or_none
from governance.models import UserMemorySettings
from governance.modes import Mode, Policy, WriteOutcome, policy_for


def user_mode(actor: Actor) -> str:
    """The actor's own mode; jobs and commands (SYSTEM) always assist."""
    user = user_or_none(actor)
    if user is None:
        return Mode.ASSIST
    cached = getattr(user, "_sam_mode", None)
    if cached is None:
        cached = (UserMemorySettings.objects.filter(user=user).values_list("mode", flat=True).first()
                  or Mode.ASSIST)
        remember_user_mode(user, cached)
    return cached


def remember_user_mode(user: User, mode: str | None) -> None:
    """Keep `user`'s mode on this user object: one lookup per request, as DRF builds a fresh
    user object for every request (the token lookup reads it in its own statement)."""
    user._sam_mode = mode or Mode.ASSIST  # type: ignore[attr-defined]  # a cache on this request's user


def policy(actor: Actor, space) -> Policy:
    return policy_for(space.mode, user_mode(actor))


def write_outcome(actor: Actor, space) -> WriteOutcome:
    """STORE or DISCARD for a write to `space`; raises Conflict (409) when the mode refuses."""
    outcome = policy(actor, space).write
    if outcome is WriteOutcome.REFUSE:
        raise ModeRefusesWrites(refusal_message(actor, space))
    return outcome


def keep_or_discard(outcome: WriteOutcome) -> bool:
    """Whether the write just made in the surrounding atomic block is kept.

    Incognito (DISCARD) answers like any mode: the caller gets its answer, built from what the
    write did, and only then is the block marked to roll back, so nothing of it is kept. Call
    it last in the block, after every write (and audit record) of the operation.
    """
    if outcome is WriteOutcome.DISCARD:
        transaction.set_rollback(True)
        return False
    return True


def refusal_message(actor: Actor, space) -> str:
    mode = space.mode if space.mode in (Mode.PAUSED, Mode.OFF) else user_mode(actor)
    whose = f"Space '{space.slug}'" if mode == space.mode else "Your memory"
    return f"{whose} is {mode}: nothing can be written until it is resumed."
