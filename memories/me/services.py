""""Forget everything about me" for a person, built from the API's own steps.

POST /api/v1/spaces/{slug}/forget/ empties one personal space (governance.retention.space_forget);
DELETE /api/v1/memories/{id}/ deletes one memory. Forgetting a person is the first for each of
their personal spaces and, when they ask for it, the second for each memory they wrote in
other spaces, each step with its own permission check and audit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.actor import Actor
from core.errors import DomainError
from governance import retention
from governance import spaces as space_services
from memories import selectors, services


@dataclass(frozen=True)
class ForgetPreview:
    """What forgetting would remove: memories per personal space, and those written elsewhere."""

    spaces: list[tuple[Any, int]]
    written_elsewhere: int

    @property
    def in_personal_spaces(self) -> int:
        return sum(count for _, count in self.spaces)


@dataclass
class ForgetResult:
    receipts: list[dict[str, Any]] = field(default_factory=list)
    deleted_elsewhere: int = 0
    kept_elsewhere: int = 0  # written elsewhere but not deleted now (their role, a memory mode)


def _written_elsewhere(actor: Actor, personal_ids: set[int]):
    filters = selectors.MemoryFilters(about_me=True, archived=None)
    return selectors.memory_list(actor=actor, filters=filters).exclude(space_id__in=personal_ids)


def forget_preview(*, actor: Actor) -> ForgetPreview:
    spaces = list(selectors.personal_spaces(actor=actor))
    counts = []
    for space in spaces:
        filters = selectors.MemoryFilters(spaces=[space.slug], archived=None)
        counts.append((space, selectors.memory_list(actor=actor, filters=filters).count()))
    elsewhere = _written_elsewhere(actor, {space.pk for space in spaces}).count()
    return ForgetPreview(spaces=counts, written_elsewhere=elsewhere)


def forget_me(*, actor: Actor, written_elsewhere: bool = False) -> ForgetResult:
    """Empty every personal space `actor` owns (a deletion receipt each; the spaces stay), then,
    with `written_elsewhere`, delete each memory they wrote in other spaces that they may delete.

    Each personal space is its own transaction, as through the API; a memory refused (the
    role or the memory mode no longer lets them delete it) is counted, not raised.
    """
    result = ForgetResult()
    spaces = list(selectors.personal_spaces(actor=actor))
    for space in spaces:
        result.receipts.append(retention.space_forget(actor=actor, slug=space.slug))
    if not written_elsewhere:
        return result
    ids = list(_written_elsewhere(actor, {space.pk for space in spaces}).values_list("pk", flat=True))
    for memory_id in ids:
        try:
            deleted = services.memory_delete(actor=actor, memory_id=memory_id)
        except DomainError:
            deleted = False
        if deleted:
            result.deleted_elsewhere += 1
        else:  # refused, or incognito: answered and not kept
            result.kept_elsewhere += 1
    return result


def import_source_allow(*, actor: Actor, slug: str, source: str) -> None:
    """The owner's consent to import `source` histories into the space, as
    PATCH /api/v1/spaces/{slug}/ {"capture_sources": [...]} gives it (managers only: 403)."""
    space = selectors.space_get(actor=actor, slug=slug)
    if source not in space.capture_sources:
        space_services.space_update(actor=actor, slug=slug,
                                    changes={"capture_sources": [*space.capture_sources, source]})
