"""django-q2 entry points for recall maintenance."""

from __future__ import annotations

from retrieval.channels import refresh_lexeme_stats
from samsite.core.models import Space


def lexeme_stats_refresh(*, space_ids: list[int] | None = None) -> dict:
    """Recount lexeme frequencies (for the lexical channel's budget), per space."""
    ids = space_ids or list(Space.objects.values_list("id", flat=True))
    return {str(space_id): refresh_lexeme_stats(space_id) for space_id in ids}
