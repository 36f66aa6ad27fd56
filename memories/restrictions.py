"""Who may see one memory: restricting it to a role and above, granting it to one user.

Both are curator actions; the gateway (governance.access) applies what they store.
"""

from __future__ import annotations

from django.db import transaction
from guardian.shortcuts import assign_perm, remove_perm

from core.actor import Actor
from core.errors import InvalidInput
from core.results import WriteResult
from core.signals import announce_change
from governance import access, policy, privacy, roles
from governance.audit.services import audit_record
from memories.models import Memory


@transaction.atomic
def memory_restrict(*, actor: Actor, memory_id: str, min_role: str | None,
                    reason: str = "") -> WriteResult[Memory]:
    """Hide one memory from roles below `min_role` (None lifts the restriction).

    A write like any other: a paused or off space (or user) refuses it (409), and in
    incognito the answer shows the change while nothing is kept.
    """
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
        audit_record("restrict", actor=actor, space=memory.space, target=memory,
                     before={"visibility_rank": before}, after={"visibility_rank": rank},
                     note=privacy.redact_value(reason.strip(), path="reason", report=[]),
                     digest_text=True)
        # Cached recall answers may hold memories whose visibility just changed.
        announce_change([memory.space_id])
        access.forget_rights()
        if not policy.keep_or_discard(outcome):
            return WriteResult(memory, persisted=False)
    return WriteResult(memory)


@transaction.atomic
def memory_grant_view(*, actor: Actor, memory_id: str, user, revoke: bool = False) -> Memory:
    """Let one user see one restricted memory (or take that back)."""
    memory = access.access_object(Memory.objects.select_related("space"), actor, pk=memory_id,
                                  action="curate", label="memory")
    # Guardian keeps the grant in MemoryUserGrant (a foreign key to the memory),
    # so it is deleted with the memory and never passes to a later memory with the same id.
    (remove_perm if revoke else assign_perm)(f"memories.{access.MEMORY_VIEW_PERMISSION}", user, memory)
    audit_record("revoke" if revoke else "grant", actor=actor, space=memory.space, target=memory,
           after={"view_memory": user.get_username()})
    access.forget_rights()
    return memory
