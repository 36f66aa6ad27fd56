"""The one cross-app event: what a space holds changed.

`spaces_changed(space_ids=[...])`, sent with `sender=Space`, fires after a write to those
spaces commits (memories written, restricted or purged, grants or modes changed). Receivers
only invalidate caches. It reaches the receivers of this process only: what other web
processes cached is kept out by the recall generation the database raises in the writing
transaction itself (retrieval.RecallGeneration).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.dispatch import Signal

from core.models import Space

spaces_changed = Signal()


def announce_change(space_ids: Iterable[int]) -> None:
    """Tell caches (recall results) that these spaces changed, once the write commits."""
    ids = sorted({int(i) for i in space_ids})
    if ids:
        transaction.on_commit(lambda: spaces_changed.send(sender=Space, space_ids=ids))
