"""The single access gateway: every read and write of space-scoped data asks here.

Selectors and services never filter by permission themselves; they call these
functions, so the rules live in one place (like Zulip's access_* helpers and NetBox's
restrict()). Today every active, authenticated user may read and write every space;
per-space roles plug in here without touching callers.

Answers follow one rule: an object the actor may not see is reported as missing (404),
so a caller cannot probe for what exists; one the actor may see but not change is
forbidden (403).
"""

from __future__ import annotations

from typing import Literal, TypeVar

from django.apps import apps
from django.contrib.auth.models import AnonymousUser
from django.db.models import Model, QuerySet

from samsite.api.errors import Forbidden, NotFound

Action = Literal["read", "write"]
M = TypeVar("M", bound=Model)


class SystemActor:
    """The actor of management commands and jobs: whoever runs them already owns the data."""

    pk = None
    is_active = True
    is_authenticated = True

    def __str__(self) -> str:
        return "system"


SYSTEM = SystemActor()


def user_or_none(actor):
    """The user to record as author or actor: None for SYSTEM and anonymous callers."""
    return actor if getattr(actor, "pk", None) else None


def _is_active(actor) -> bool:
    if actor is SYSTEM:
        return True
    return actor is not None and not isinstance(actor, AnonymousUser) and actor.is_active


def spaces_visible(actor) -> QuerySet:
    """Spaces `actor` may read."""
    Space = apps.get_model("memories", "Space")
    if not _is_active(actor):
        return Space.objects.none()
    return Space.objects.all()


def can(actor, action: Action, space) -> bool:
    """Whether `actor` may perform `action` in `space`."""
    # Per-space roles (owner, curator, contributor, viewer) refine this rule.
    return _is_active(actor)


def restrict(queryset: QuerySet[M], actor, *, space_field: str = "space") -> QuerySet[M]:
    """Narrow a queryset of space-scoped rows to what `actor` may read."""
    if not _is_active(actor):
        return queryset.none()
    return queryset.filter(**{f"{space_field}__in": spaces_visible(actor)})


def access_space(actor, *, slug: str, action: Action = "read"):
    """The space called `slug`, if `actor` may see it (else NotFound) and act (else Forbidden)."""
    space = spaces_visible(actor).filter(slug=slug).first()
    if space is None:
        raise NotFound(f"No space '{slug}'.")
    if action == "write" and not can(actor, "write", space):
        raise Forbidden(f"You may not change space '{slug}'.")
    return space


def access_object(queryset: QuerySet[M], actor, *, pk: str, action: Action = "read",
                  label: str = "object") -> M:
    """One space-scoped row by primary key, through the same rules as access_space."""
    obj = restrict(queryset, actor).filter(pk=pk).first()
    if obj is None:
        raise NotFound(f"No {label} '{pk}'.")
    if action == "write" and not can(actor, "write", obj.space):
        raise Forbidden(f"You may not change {label} '{pk}'.")
    return obj
