"""The single access gateway: every read and write of space-scoped data asks here.

Selectors, services, the admin, recall, context packs and exports never filter by
permission themselves; they call these functions, so the rules live in one place (like
Zulip's access_* helpers and NetBox's restrict()).

The rules:
- A user's rights in a space are the django-guardian object permissions they hold on it,
  directly or through a group (governance.roles maps roles to permissions). Superusers
  and the SYSTEM actor hold every permission everywhere.
- An API token can narrow its user's rights to named spaces and to a role. A token that
  names spaces works in those only: once they are all deleted it works in none.
- Within a readable space, a memory is hidden from roles ranked below its
  `visibility_rank` or below the minimum role of any restricted tag it carries, unless
  the user was granted `memories.view_memory` on that memory itself.

Answers follow one rule: an object the actor may not see is reported as missing (404),
so a caller cannot probe for what exists; one the actor may see but not change is
forbidden (403).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, TypeVar, cast

from django.contrib.auth.models import AnonymousUser, User
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, Q, QuerySet

from core.actor import SYSTEM, Actor, SystemActor
from core.errors import Forbidden, NotFound
from core.models import Space
from governance import roles
from governance.models import ApiToken, RestrictedTag

# read: see and recall; write: add memories (and edit your own); edit: change a memory;
# curate: archive, restore, delete, merge, restrict; remove: delete one memory (curators any,
# contributors their own: what SAM knows about you is yours to take back); audit: read audit
# timelines; manage: members, roles, restricted tags, modes, retention, forget.
Action = Literal["read", "write", "edit", "curate", "remove", "audit", "manage"]
M = TypeVar("M", bound=Model)

ACTION_PERMISSION: dict[str, str] = {
    "read": roles.PERM_READ,
    "write": roles.PERM_WRITE,
    "edit": roles.PERM_EDIT_ANY,
    "curate": roles.PERM_CURATE,
    "remove": roles.PERM_CURATE,
    "audit": roles.PERM_AUDIT,
    "manage": roles.PERM_MANAGE,
}
ALL_PERMISSIONS = frozenset(code for code, _ in roles.SPACE_PERMISSIONS)
MEMORY_VIEW_PERMISSION = "view_memory"


def user_or_none(actor: Actor) -> User | None:
    """The user to record as author or actor: None for SYSTEM and anonymous callers."""
    # Only a signed-in User has a pk (SYSTEM's and AnonymousUser's are None).
    return cast("User | None", actor if getattr(actor, "pk", None) else None)


def _is_active(actor: Actor | None) -> TypeGuard[Actor]:
    if actor is SYSTEM:
        return True
    return actor is not None and not isinstance(actor, AnonymousUser) and actor.is_active


def _token(actor: Actor) -> ApiToken | None:
    """The API token the actor authenticated with, if any (set by ApiTokenAuthentication)."""
    return cast("ApiToken | None", getattr(actor, "sam_token", None))


# --- rights ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SpaceRights:
    space_id: int
    perms: frozenset[str]
    rank: int
    hidden_tags: tuple[str, ...] = ()

    def allows(self, action: str) -> bool:
        return ACTION_PERMISSION[action] in self.perms


def _space_content_type() -> ContentType:
    return ContentType.objects.get_for_model(Space)


def _guardian_perms(user: User, content_type: ContentType,
                    only: frozenset[int] | None = None) -> dict[str, set[str]]:
    """object_pk -> permission codenames the user holds, directly or through groups
    (on the objects `only` names, when given)."""
    from guardian.models import GroupObjectPermission, UserObjectPermission

    held: dict[str, set[str]] = defaultdict(set)
    direct = UserObjectPermission.objects.filter(user=user, content_type=content_type)
    via_groups = GroupObjectPermission.objects.filter(
        group__in=user.groups.all(), content_type=content_type
    )
    if only is not None:
        # guardian keeps object keys as text.
        object_pks = [str(pk) for pk in sorted(only)]
        direct = direct.filter(object_pk__in=object_pks)
        via_groups = via_groups.filter(object_pk__in=object_pks)
    for queryset in (direct, via_groups):
        for object_pk, codename in queryset.values_list("object_pk", "permission__codename"):
            held[object_pk].add(codename)
    return held


# --- the per-request memo of rights() ---------------------------------------------------
#
# rights() costs about four queries and one request asks it two or three times (a write
# checks the object, then the action, then hides unseen links). Within one HTTP request
# the answer is kept, keyed by (user, token); RightsMemoMiddleware opens the scope.
# Outside a request (jobs, commands, tests calling services) nothing is kept, so a
# long-running job never acts on rights that changed since it started. Every service
# that changes rights calls forget_rights(), so a check later in the same request sees
# the change.


@dataclass
class _RequestMemo:
    # Keyed by (user, token), or by (user, token, space ids) for rights asked in named spaces only.
    answers: dict[tuple[Any, ...], dict[int, SpaceRights]]
    # Set by forget_rights(): this request changed rights, so the generation its token was
    # read with is out of date and the memo across requests is not used for the rest of it.
    changed: bool = False


_rights_memo: ContextVar[_RequestMemo | None] = ContextVar("sam_rights_memo", default=None)


@contextmanager
def rights_memoised() -> Iterator[None]:
    """Keep rights() answers until the block ends (one HTTP request)."""
    token = _rights_memo.set(_RequestMemo(answers={}))
    try:
        yield
    finally:
        _rights_memo.reset(token)


def forget_rights() -> None:
    """Drop the memoised rights of this request: call after any change to rights."""
    memo = _rights_memo.get()
    if memo is not None:
        memo.answers.clear()
        memo.changed = True


def forget_rights_on_space_delete(sender: type[Space], **kwargs: Any) -> None:
    """post_delete receiver for Space (connected in GovernanceConfig.ready)."""
    forget_rights()


# --- the memo of rights() across requests -------------------------------------------------
#
# Rights change rarely and every request reads them. Any write to a table they are read
# from moves governance.models.RightsGeneration (by triggers in Postgres, so a change made
# by another process, the admin or plain SQL moves it too), and the token lookup of each
# request reads the current value in its own statement (governance.authentication). Answers
# computed under one value are kept by this process, keyed by that value, user, token, the
# token's role and all-spaces flag and the spaces asked about, until a request brings
# another value. Reading the value before the rights means an answer is never filed under a
# value newer than the rows it was read from; the tables are read on the primary
# (GovernanceConfig.ready), where the token and its value are read, so a replica's lag
# cannot file old rows under a new value either. Superusers, SYSTEM and callers signed in
# by session (no token, so no value) are not kept across requests.

# Bounded by the rights held, not the answers: a user in a thousand spaces holds a thousand.
# At about 200 bytes a right, the memo stays near 40 MB at most per process.
MAX_KEPT_RIGHTS = 200_000


@dataclass
class _ProcessMemo:
    generation: int = -1
    answers: dict[tuple[Any, ...], dict[int, SpaceRights]] = field(default_factory=dict)
    rights_held: int = 0
    # Users with a memory granted to them (directly or through a group) under `generation`:
    # the others skip the query for granted memories.
    has_grants: dict[int, bool] = field(default_factory=dict)


_process_memo = _ProcessMemo()
_process_lock = threading.Lock()


def _kept_for(actor: Actor) -> _ProcessMemo | None:
    """What this process keeps under the rights generation this request's token was read
    with; None when the actor's answers are not kept."""
    if actor is SYSTEM or actor.is_superuser:
        return None
    request_memo = _rights_memo.get()
    if request_memo is None or request_memo.changed:
        # Outside a request nothing is kept (see above); within one that changed rights,
        # the value its token was read with is out of date.
        return None
    generation = getattr(_token(actor), "rights_generation", None)
    return None if generation is None else _kept(generation)


def _kept(generation: int) -> _ProcessMemo:
    """The process memo for `generation`, emptied first when it held another.

    Any other value, newer or older, empties it. An answer is only ever filed under a value
    read before its rows were, and a value is never written twice, so whatever a request
    finds under the value it read is at least as new as that value. Values are unique but
    not always rising (two changes that commit in the other order than they drew theirs
    leave the row on the smaller one), so the memo does not assume an order: a request that
    read a value before a change only empties the memo once."""
    global _process_memo
    with _process_lock:
        if generation != _process_memo.generation:
            _process_memo = _ProcessMemo(generation=generation)
        return _process_memo


def _rights_kept_across_requests(actor: Actor, wanted: frozenset[int] | None) -> dict[int, SpaceRights]:
    kept = _kept_for(actor)
    if kept is None:
        return _rights(actor, wanted)
    token = cast(ApiToken, _token(actor))
    key = (actor.pk, token.pk, token.role, token.all_spaces, wanted)
    answer = kept.answers.get(key)
    if answer is None:
        answer = _rights(actor, wanted)
        if kept.rights_held + len(answer) <= MAX_KEPT_RIGHTS:
            kept.answers[key] = answer
            kept.rights_held += len(answer)
    return answer


def _memo_key(actor: Actor) -> tuple[Any, Any]:
    if actor is SYSTEM:
        return ("system", None)
    token = _token(actor)
    return (actor.pk, token.pk if token is not None else None)


def rights(actor: Actor, *, only: Iterable[int] | None = None) -> dict[int, SpaceRights]:
    """space id -> what `actor` may do there, for every space it may read (of those `only`
    names, when given: a user in a thousand spaces asking about five pays for five).

    Memoised for the length of an HTTP request (see rights_memoised) and, for token
    callers, across requests until rights change (see RightsGeneration); the caller gets
    its own dict, so changing it changes nothing for the next caller.
    """
    if not _is_active(actor):
        return {}
    wanted = None if only is None else frozenset(only)
    memo = _rights_memo.get()
    if memo is None:
        return _rights(actor, wanted)
    key = _memo_key(actor)
    if wanted is not None and key in memo.answers:
        # Every right is known already: the named spaces' are among them.
        return {pk: r for pk, r in memo.answers[key].items() if pk in wanted}
    memo_key = key if wanted is None else (*key, wanted)
    if memo_key not in memo.answers:
        memo.answers[memo_key] = _rights_kept_across_requests(actor, wanted)
    return dict(memo.answers[memo_key])


def _rights(actor: Actor, only: frozenset[int] | None = None) -> dict[int, SpaceRights]:
    if actor is SYSTEM or actor.is_superuser:
        spaces = Space.objects.all() if only is None else Space.objects.filter(pk__in=sorted(only))
        perms_by_space = {pk: set(ALL_PERMISSIONS) for pk in spaces.values_list("pk", flat=True)}
    else:
        # SYSTEM is a superuser (the branch above); rights() turned anonymous callers away.
        assert not isinstance(actor, (SystemActor, AnonymousUser))
        held = _guardian_perms(actor, _space_content_type(), only)
        perms_by_space = {int(pk): perms & ALL_PERMISSIONS for pk, perms in held.items()}
    token = _token(actor)
    if token is not None:
        if not token.all_spaces:
            # Scoped to named spaces: none left (all deleted) means no space at all.
            # Through the link table, read on the primary as the rest of the rights are.
            allowed_ids = set(ApiToken.spaces.through.objects.filter(apitoken_id=token.pk)
                              .values_list("space_id", flat=True))
            perms_by_space = {pk: p for pk, p in perms_by_space.items() if pk in allowed_ids}
        if token.role:
            cap = roles.ROLE_PERMISSIONS[token.role]
            perms_by_space = {pk: p & cap for pk, p in perms_by_space.items()}
    readable = {pk: frozenset(p) for pk, p in perms_by_space.items() if roles.PERM_READ in p}
    return _with_hidden_tags(readable)


def _with_hidden_tags(perms_by_space: dict[int, frozenset[str]]) -> dict[int, SpaceRights]:
    result = {
        pk: SpaceRights(space_id=pk, perms=perms, rank=roles.rank_of_permissions(perms))
        for pk, perms in perms_by_space.items()
    }
    hidden: dict[int, list[str]] = defaultdict(list)
    for space_id, tag, min_role in (RestrictedTag.objects.filter(space_id__in=list(result))
                                    .values_list("space_id", "tag", "min_role")):
        if roles.RANK[min_role] > result[space_id].rank:
            hidden[space_id].append(tag)
    for space_id, tags in hidden.items():
        current = result[space_id]
        result[space_id] = SpaceRights(space_id, current.perms, current.rank, tuple(sorted(tags)))
    return result


# --- memory visibility ----------------------------------------------------------------

@dataclass(frozen=True)
class Visibility:
    """Which memories an actor may see, as a Q object for the ORM or SQL for recall.

    Spaces sharing a rank and hidden tags are grouped, so the condition stays a handful
    of clauses however many spaces the actor reads.
    """

    groups: tuple[tuple[tuple[int, ...], int, tuple[str, ...]], ...]
    granted: tuple[str, ...] = ()

    @property
    def space_ids(self) -> tuple[int, ...]:
        return tuple(sorted(pk for ids, _, _ in self.groups for pk in ids))

    def q(self, prefix: str = "") -> Q:
        if not self.groups:
            return Q(pk__in=[])
        condition = Q()
        for ids, rank, hidden in self.groups:
            clause = Q(**{f"{prefix}space_id__in": ids, f"{prefix}visibility_rank__lte": rank})
            if hidden:
                clause &= ~Q(**{f"{prefix}tags__overlap": list(hidden)})
            condition |= clause
        if self.granted:
            condition |= Q(**{f"{prefix}pk__in": self.granted})
        return condition

    def sql(self, alias: str = "m") -> tuple[str, list[Any]]:
        if not self.groups:
            return "FALSE", []
        clauses, params = [], []
        for ids, rank, hidden in self.groups:
            clause = f"({alias}.space_id = ANY(%s) AND {alias}.visibility_rank <= %s"
            params += [list(ids), rank]
            if hidden:
                clause += f" AND NOT {alias}.tags && %s::varchar[]"
                params.append(list(hidden))
            clauses.append(clause + ")")
        if self.granted:
            clauses.append(f"{alias}.id = ANY(%s)")
            params.append(list(self.granted))
        return "(" + " OR ".join(clauses) + ")", params


def memory_visibility(actor: Actor, space_ids: set[int] | None = None, *,
                      granted: dict[int, SpaceRights] | None = None) -> Visibility:
    """The memories `actor` may see, optionally only in `space_ids`.

    Pass `granted` (from rights()) when you already have it, to save the queries.
    """
    by_space = rights(actor) if granted is None else granted
    if space_ids is not None:
        by_space = {pk: r for pk, r in by_space.items() if pk in space_ids}
    grouped: dict[tuple[int, tuple[str, ...]], list[int]] = defaultdict(list)
    for pk, r in by_space.items():
        grouped[(r.rank, r.hidden_tags)].append(pk)
    groups = tuple(
        (tuple(sorted(ids)), rank, hidden) for (rank, hidden), ids in sorted(grouped.items())
    )
    return Visibility(groups=groups, granted=_granted_memories(actor, set(by_space)))


def _granted_memories(actor: Actor, readable_space_ids: set[int]) -> tuple[str, ...]:
    """Memories granted to the actor one by one, inside spaces it may read."""
    if actor is SYSTEM or not _is_active(actor) or not readable_space_ids:
        return ()
    kept = _kept_for(actor)
    if kept is not None:
        # Most users hold no grant at all: asked once per rights generation, that spares
        # their every recall the query below.
        user_id = cast(int, actor.pk)  # a token's user, never SYSTEM (_kept_for)
        if user_id not in kept.has_grants:
            kept.has_grants[user_id] = memory_registry().holds_any(actor)
        if not kept.has_grants[user_id]:
            return ()
    return tuple(sorted(set(memory_registry().granted(actor, readable_space_ids))))


# --- what memories registers -------------------------------------------------------------
# Governance sits below the apps whose rows it guards and never names their models: the
# memories app registers its Memory model here as it starts (memories.apps), with how to
# find the memories granted to a user one by one. Rows of that model carry `space_id`,
# `visibility_rank` and `tags`, which Visibility narrows on.

@dataclass(frozen=True)
class MemoryRegistry:
    model: type[Model]
    versions: type[Model]
    # (actor, readable space ids) -> ids of the memories granted to that user one by one
    granted: Callable[[Any, set[int]], Iterable[str]]
    # actor -> whether any memory is granted to that user, directly or through a group
    holds_any: Callable[[Any], bool]


_memory_registry: MemoryRegistry | None = None


def register_memories(*, model: type[Model], versions: type[Model],
                      granted: Callable[[Any, set[int]], Iterable[str]],
                      holds_any: Callable[[Any], bool]) -> None:
    global _memory_registry
    _memory_registry = MemoryRegistry(model=model, versions=versions, granted=granted,
                                      holds_any=holds_any)


def memory_registry() -> MemoryRegistry:
    if _memory_registry is None:
        raise ImproperlyConfigured("No memory model registered: is 'memories' in INSTALLED_APPS?")
    return _memory_registry


# --- the gateway functions --------------------------------------------------------------

def sees_everything(actor: Actor) -> bool:
    """Whether `actor` holds every right everywhere (SYSTEM and superusers), including over
    records that belong to no space or to a deleted one."""
    return actor is SYSTEM or (_is_active(actor) and actor.is_superuser and _token(actor) is None)


def can_create_spaces(actor: Actor) -> bool:
    """Whether `actor` may create a space (and so become its owner).

    Any signed-in user may, except through a token narrowed to named spaces or capped at
    a role below owner: such a token was given for a fixed scope, and a space it created
    would hand it an owner's rights outside that scope (or, for a scoped token, a space it
    could not even see).
    """
    if actor is SYSTEM:
        return True
    if not _is_active(actor):
        return False
    token = _token(actor)
    if token is None:
        return True
    if not token.all_spaces:
        return False
    return token.role in ("", roles.Role.OWNER)


def token_of(actor: Actor) -> ApiToken | None:
    """The API token `actor` authenticated with (None for a session, SYSTEM or anonymous)."""
    return _token(actor)


def may_revoke_any_token(actor: Actor) -> bool:
    """Whether `actor` may see and revoke other people's API tokens: superusers, and staff
    given the `governance.revoke_any_token` permission, signed in (never through a token)."""
    if actor is SYSTEM:
        return True
    if not _is_active(actor) or _token(actor) is not None:
        return False
    if sees_everything(actor):
        return True
    user = user_or_none(actor)
    return bool(user is not None and user.is_staff and user.has_perm("governance.revoke_any_token"))


def spaces_visible(actor: Actor) -> QuerySet[Space]:
    """Spaces `actor` may read."""
    if not _is_active(actor):
        return Space.objects.none()
    if actor is SYSTEM:
        return Space.objects.all()
    return Space.objects.filter(pk__in=list(rights(actor)))


def can(actor: Actor, action: Action, space: Space, obj: Model | None = None) -> bool:
    """Whether `actor` may perform `action` in `space` (on `obj`, for per-memory rules)."""
    if actor is SYSTEM:
        return True
    granted = rights(actor).get(space.pk)
    if granted is None:
        return False
    if granted.allows(action):
        return True
    # Contributors edit, and delete, what they wrote themselves.
    return (action in ("edit", "remove") and granted.allows("write") and obj is not None
            and getattr(obj, "created_by_id", None) == getattr(actor, "pk", object()))


def restrict(queryset: QuerySet[M], actor: Actor | None, *, space_field: str = "space") -> QuerySet[M]:
    """Narrow a queryset of space-scoped rows to what `actor` may read.

    Memories also pass the per-memory rules (restricted memories and tags).
    """
    if not _is_active(actor):
        return queryset.none()
    if queryset.model is memory_registry().model:
        return queryset.filter(memory_visibility(actor).q())
    return queryset.filter(**{f"{space_field}__in": list(rights(actor))})


# Fields of a recorded memory state that name another memory.
LINK_FIELDS = frozenset({"superseded_by"})


def hide_unseen_links_in(records: list[Any], actor: Actor | None) -> None:
    """Blank, in place, every link to a memory `actor` may not see inside recorded data.

    `records` are what versions and audit payloads keep: states ({"superseded_by": id,
    ...}), diffs ([{path, before, after}]) and payloads nesting both. A link to a hidden
    memory becomes None, as the memory's own superseded_by does, so history never names
    what the reader may not see. One query for all of `records`; with no actor (None), every
    link is blanked.
    """
    found: list[tuple[dict[str, Any], str]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for name in LINK_FIELDS & set(value):
                if isinstance(value[name], str) and value[name]:
                    found.append((value, name))
            if value.get("path") in LINK_FIELDS:
                found.extend((value, side) for side in ("before", "after")
                             if isinstance(value.get(side), str) and value[side])
            for child in value.values():
                if isinstance(child, (dict, list)):
                    walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(records)
    if not found:
        return
    Memory = memory_registry().model
    seen = set(restrict(Memory._default_manager.filter(pk__in={holder[key] for holder, key in found}), actor)
               .values_list("pk", flat=True))
    for holder, key in found:
        if holder[key] not in seen:
            holder[key] = None


def access_space(actor: Actor, *, slug: str, action: Action = "read") -> Space:
    """The space called `slug`, if `actor` may see it (else NotFound) and act (else Forbidden)."""
    space = spaces_visible(actor).filter(slug=slug).first()
    if space is None:
        raise NotFound(f"No space '{slug}'.")
    if action != "read" and not can(actor, action, space):
        raise Forbidden(f"You may not {action} in space '{slug}'.")
    return space


def access_object(queryset: QuerySet[M], actor: Actor, *, pk: str, action: Action = "read",
                  label: str = "object") -> M:
    """One space-scoped row by primary key, through the same rules as access_space."""
    obj = restrict(queryset, actor).filter(pk=pk).first()
    if obj is None:
        raise NotFound(f"No {label} '{pk}'.")
    # Every space-scoped model has a `space` FK, which a TypeVar bound cannot say.
    if action != "read" and not can(actor, action, obj.space, obj):  # type: ignore[attr-defined]
        raise Forbidden(f"You may not {action} {label} '{pk}'.")
    return obj


__all__ = ["SYSTEM", "Action", "Actor", "SystemActor"]  # re-exported: callers name SYSTEM here
