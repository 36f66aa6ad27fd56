"""API tokens: issued, listed and revoked, by SAM itself and by each person for themselves.

Two kinds of caller:

- Trusted set-up (`manage.py sam_token`, `sam_up`, tests): `api_token_issue` makes any
  token for any user; `api_token_revoke` and `api_token_set_expiry` change one.
- A person acting for themselves (REST `/api/v1/me/tokens/`, the admin, the "My tokens"
  page): `own_token_issue`, `own_tokens`, `own_token_get` and `token_revoke`. Every rule of
  self-service lives here, so the three screens cannot disagree:

  * a token's role is no higher than the person's own: in each space it names, the role's
    permissions must be ones they hold there (through the access gateway, which already
    narrows them by the token they call with, if any); a token for all of their spaces may
    name a role they hold in at least one;
  * every space named must be one they can see; one they cannot see is refused with the
    very answer a space that does not exist gets (400), so nobody learns which exist;
  * an expiry is in the future;
  * through a token, the new one is never wider than it: only with the write scope, no
    scope it lacks, no space it cannot see, no role above its cap, no later expiry. What
    is left out is inherited from it (its spaces, role and expiry), not widened to the
    person's.

Every issue and revoke is audited (`token_issue`, `token_revoke`) with who did it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from core.actor import Actor
from core.errors import Forbidden, InvalidInput, NotFound
from core.models import Space
from governance import access, roles
from governance import scopes as token_scopes
from governance.audit.services import audit_record
from governance.models import ApiToken, generate_token, hash_token

NAME_MAX_LENGTH = ApiToken._meta.get_field("name").max_length or 100


# --- trusted issuing and revoking ----------------------------------------------------------

@transaction.atomic
def api_token_issue(*, user: User, name: str, expires_at: datetime | None = None,
                    spaces: Iterable[Space] = (), role: str = "", scopes: Iterable[str] | None = None,
                    actor: Actor | None = None, note: str = "") -> tuple[ApiToken, str]:
    """Create a token for `user`. Returns the row and the plaintext, which is not stored.

    `spaces`, `role` and `scopes` narrow what the token may do below its user's own rights.
    A token issued with no spaces works in all of its user's spaces (`all_spaces`); one
    issued with spaces works only in them, and in none once they are all deleted. No
    permission check: callers that act for a person use `own_token_issue`.
    """
    if role and role not in roles.Role.values:
        raise InvalidInput("Unknown role.", fields={"role": [f"One of {', '.join(roles.Role.values)}."]})
    kept_scopes = token_scopes.clean(scopes)
    spaces = list(spaces)
    raw = generate_token()
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:10], key_hash=hash_token(raw), expires_at=expires_at,
        role=role, all_spaces=not spaces, scopes=kept_scopes,
    )
    token.spaces.set(spaces)
    audit_record("token_issue", actor=actor or access.SYSTEM, target=token, note=note,
                 after={"user": user.get_username(), "name": name, "role": role,
                        "all_spaces": token.all_spaces, "spaces": sorted(s.slug for s in spaces),
                        "scopes": kept_scopes,
                        "expires_at": expires_at.isoformat() if expires_at else None})
    access.forget_rights()
    return token, raw


@transaction.atomic
def api_token_set_expiry(*, token: ApiToken, expires_at: datetime | None,
                         actor: Actor | None = None) -> ApiToken:
    """Change when a token stops working (None: never). Audited as an edit of the token."""
    locked = ApiToken.objects.select_for_update().get(pk=token.pk)
    if locked.expires_at != expires_at:
        before = locked.expires_at
        locked.expires_at = expires_at
        locked.save(update_fields=["expires_at"])
        audit_record("edit", actor=actor or access.SYSTEM, target=locked,
                     before={"expires_at": before.isoformat() if before else None},
                     after={"expires_at": expires_at.isoformat() if expires_at else None})
        access.forget_rights()
    token.expires_at = locked.expires_at
    return locked


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor: Actor | None = None) -> ApiToken:
    """Stop `token` working now. Revoking a revoked token changes nothing (and audits nothing)."""
    # Locked, so two revokes at once audit one revoke.
    locked = ApiToken.objects.select_for_update().select_related("user").get(pk=token.pk)
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])
        audit_record("token_revoke", actor=actor or access.SYSTEM, target=locked,
                     after={"user": locked.user.get_username(), "name": locked.name})
        access.forget_rights()
    token.revoked_at = locked.revoked_at
    return locked


# --- a person's own tokens -------------------------------------------------------------------

def _person(actor: Actor) -> User:
    """The signed-in user acting for themselves (Forbidden for SYSTEM or anonymous callers)."""
    user = access.user_or_none(actor)
    if user is None or not user.is_active:
        raise Forbidden("Sign in to manage your tokens.")
    return user


def _with_visible_spaces(queryset: QuerySet[ApiToken], actor: Actor) -> QuerySet[ApiToken]:
    """Tokens with their spaces prefetched, only those `actor` can see: a token may still
    name a space its owner has since lost, whose name is no longer theirs to read."""
    visible = Space.objects.filter(pk__in=access.spaces_visible(actor).values("pk")).order_by("slug")
    return queryset.prefetch_related(Prefetch("spaces", queryset=visible))


def own_tokens(*, actor: Actor) -> QuerySet[ApiToken]:
    """The tokens of the person `actor` is, newest first, their spaces prefetched.

    Through a token, only the tokens that name no space it cannot see (and, unless it works
    in all spaces, none that works in all): a token narrowed to one space must not learn
    what the person's other tokens reach."""
    user = _person(actor)
    queryset = ApiToken.objects.filter(user=user)
    calling = access.token_of(actor)
    if calling is not None:
        queryset = queryset.exclude(spaces__in=Space.objects.exclude(
            pk__in=access.spaces_visible(actor).values("pk")))
        if not calling.all_spaces:
            queryset = queryset.filter(all_spaces=False)
    return _with_visible_spaces(queryset.order_by("-created_at", "-pk"), actor)


def manageable_tokens(*, actor: Actor) -> QuerySet[ApiToken]:
    """Tokens `actor` may see and revoke in the admin: everyone's for those allowed to
    revoke any (access.may_revoke_any_token), else their own."""
    if access.may_revoke_any_token(actor):
        return ApiToken.objects.select_related("user").prefetch_related("spaces")
    return own_tokens(actor=actor).select_related("user")


def own_token_get(*, actor: Actor, token_id: int | str) -> ApiToken:
    """One of the person's own tokens (NotFound for anyone else's, as for one that does not exist)."""
    found = own_tokens(actor=actor).filter(pk=_token_pk(token_id)).first()
    if found is None:
        raise NotFound(f"No token {token_id} of yours.")
    return found


def token_revoke(*, actor: Actor, token_id: int | str, anyones: bool = False) -> ApiToken:
    """Revoke one token: the person's own, or (with `anyones`, for those allowed to revoke
    any) anyone's. NotFound for a token the actor may not revoke."""
    if anyones and access.may_revoke_any_token(actor):
        token = ApiToken.objects.filter(pk=_token_pk(token_id)).first()
        if token is None:
            raise NotFound(f"No token {token_id}.")
    else:
        token = own_token_get(actor=actor, token_id=token_id)
    return api_token_revoke(token=token, actor=actor)


def _token_pk(token_id: int | str) -> int:
    try:
        return int(token_id)
    except (TypeError, ValueError):
        raise NotFound(f"No token {token_id} of yours.") from None


def own_token_issue(*, actor: Actor, name: str, spaces: list[str] | None = None, role: str = "",
                    scopes: list[str] | None = None,
                    expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """Issue a token for the person `actor` is, no wider than they are (and, through a
    token, no wider than it). Returns the row and the secret, shown this once.

    `spaces`: slugs (None: all of their spaces, or through a token, its spaces); `role`:
    "" for their own role in each space (through a role-capped token, its cap). Raises
    InvalidInput (400) for bad values and for spaces the actor cannot see, Forbidden (403)
    for a role, scope or expiry above what the actor holds.
    """
    user = _person(actor)
    calling = access.token_of(actor)
    name = (name or "").strip()
    if not name:
        raise InvalidInput("Name the token.", fields={"name": ["Give the token a name, to tell it apart."]})
    if len(name) > NAME_MAX_LENGTH:
        raise InvalidInput("Name too long.", fields={"name": [f"At most {NAME_MAX_LENGTH} characters."]})
    kept_scopes = token_scopes.clean(scopes)
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput("Expiry in the past.", fields={"expires_at": ["Give a time in the future."]})
    if role and role not in roles.Role.values:
        raise InvalidInput("Unknown role.", fields={"role": [f"One of {', '.join(roles.Role.values)}, "
                                                             "or empty for your own role."]})
    named = _visible_spaces(actor, spaces)
    if calling is not None:
        named, role, expires_at = _no_wider_than(calling, named=named, role=role, scopes=kept_scopes,
                                                 expires_at=expires_at)
    if role:
        _role_held(actor, role, named)
    note = f"issued through token {calling.prefix}…" if calling is not None else ""
    return api_token_issue(user=user, name=name, expires_at=expires_at, spaces=named or (), role=role,
                           scopes=kept_scopes, actor=actor, note=note)



def _visible_spaces(actor: Actor, slugs: list[str] | None) -> list[Space] | None:
    """The spaces named by `slugs`, each one the actor can see (None when none are named).

    A slug of a space the actor cannot see gets the same answer as one of no space at all."""
    if slugs is None:
        return None
    wanted = list(dict.fromkeys(slug.strip() for slug in slugs))
    if not wanted:
        raise InvalidInput("No spaces named.", fields={"spaces": [
            "Name at least one space, or leave spaces out for all of yours."]})
    found = {space.slug: space for space in access.spaces_visible(actor).filter(slug__in=wanted)}
    unseen = [slug for slug in wanted if slug not in found]
    if unseen:
        raise InvalidInput("Unknown space.", fields={"spaces": [
            f"No space '{slug}' that you can see." for slug in unseen]})
    return [found[slug] for slug in wanted]


def _role_held(actor: Actor, role: str, named: list[Space] | None) -> None:
    """Forbidden unless `actor` holds every permission of `role` in each named space (in at
    least one of its spaces, when none are named)."""
    needed = roles.ROLE_PERMISSIONS[role]
    held = access.rights(actor, only=None if named is None else [space.pk for space in named])
    if named is None:
        if access.sees_everything(actor) or any(needed <= r.perms for r in held.values()):
            return
        raise Forbidden(f"You hold no role as high as {role} in any space.", fields={
            "role": [f"'{role}' is above your own role in every space you are in."]})
    below = [space.slug for space in named if space.pk not in held or not needed <= held[space.pk].perms]
    if below:
        raise Forbidden(f"The role {role} is above yours in {', '.join(below)}.", fields={
            "role": [f"'{role}' is above your own role in {', '.join(repr(s) for s in below)}."]})


def _no_wider_than(calling: ApiToken, *, named: list[Space] | None, role: str, scopes: list[str],
                   expires_at: datetime | None) -> tuple[list[Space] | None, str, datetime | None]:
    """The spaces, role and expiry of a token issued through `calling`, which it may not
    exceed; what was left out is inherited from it. Raises Forbidden for anything wider."""
    if token_scopes.Scope.WRITE not in calling.scopes:
        raise Forbidden("A read-only token may not issue tokens.")
    wider = sorted(set(scopes) - set(calling.scopes))
    if wider:
        raise Forbidden("Scope above the token's.", fields={"scopes": [
            f"The token you use has no {', '.join(wider)} scope to give."]})
    if named is None and not calling.all_spaces:
        # Its own spaces, those still there (the access gateway reads them the same way).
        named = list(calling.spaces.order_by("slug"))
        if not named:
            raise Forbidden("The token you use works in no space any more; it cannot issue one.")
    if calling.role:
        if not role:
            role = calling.role
        elif not roles.ROLE_PERMISSIONS[role] <= roles.ROLE_PERMISSIONS[calling.role]:
            raise Forbidden("Role above the token's.", fields={"role": [
                f"The token you use is capped at '{calling.role}'; '{role}' is above it."]})
    if calling.expires_at is not None:
        if expires_at is None:
            expires_at = calling.expires_at
        elif expires_at > calling.expires_at:
            raise Forbidden("Expiry after the token's.", fields={"expires_at": [
                f"The token you use expires at {calling.expires_at.isoformat()}; give that or earlier."]})
    return named, role, expires_at
