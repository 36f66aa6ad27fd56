"""What forgetting a space and its retention window delete of recall's data.

Registered with governance.retention as the app starts (retrieval.apps).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from core.models import Space
from governance.retention import Deleted, SpaceData
from retrieval.models import LexemeStat, RecallEvent, SpaceTextStats


def recalls_of(space: Space, memory_ids: list[str], whole_space: bool) -> Deleted:
    """Recall events quote queries and rationales about these memories; forgetting a whole
    space also drops every recall that looked into it."""
    touched = Q(memory_ids__overlap=memory_ids) if memory_ids else Q(pk__in=[])
    if whole_space:
        touched |= Q(spaces__contains=[space.slug])
    return RecallEvent.objects.filter(touched).delete()[1]


def old_recalls(space: Space, cutoff: datetime) -> Deleted:
    """Every recall that looked into the space before the cutoff, including one that also
    looked into other spaces: its query and rationales may quote this space's memories."""
    return RecallEvent.objects.filter(spaces__contains=[space.slug], created_at__lt=cutoff).delete()[1]


def drop_statistics(space: Space) -> None:
    """Drop the lexeme statistics of a space (they count its search tokens)."""
    LexemeStat.objects.filter(space=space).delete()
    SpaceTextStats.objects.filter(space=space).delete()


SPACE_DATA = SpaceData(
    with_memories=recalls_of,
    expired=old_recalls,
    statistics=drop_statistics,
    count_names={RecallEvent: "recall_events"},
)
