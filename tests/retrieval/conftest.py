"""A small store of embedded memories shared by the recall and context-pack tests."""

import pytest
from django.core.cache import cache

from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory

AS_OF = "2026-11-22T12:00:00Z"

MEMORIES = [
    dict(title="MudSnackbar preferred for alerts", tags=["ui", "blazor", "mudblazor"], confidence_score=0.85,
         content="Use MudSnackbar instead of MudDialog for alert-style notifications in Blazor UI.",
         canonical_phrases=["use mudsnackbar for alerts", "avoid muddialog for alert pop-ups"]),
    dict(title="Create Postgres indexes concurrently", tags=["postgres", "migrations"],
         content="A migration that ran CREATE INDEX on the events table locked writes for 9 minutes. "
                 "Use AddIndexConcurrently with atomic = False on large tables.",
         canonical_phrases=["create index concurrently", "migration locked the table"]),
    dict(title="Prefer pytest fixtures over setUp", tags=["testing", "pytest"],
         content="Write tests as plain pytest functions with fixtures and factory-boy factories."),
    dict(title="Dana is vegetarian", tags=["food", "diet"],
         content="Dana is vegetarian and does not eat fish; suggest vegetarian recipes."),
]


@pytest.fixture
def store(space, on_commit):
    cache.clear()
    with on_commit():
        made = {m["title"]: make_memory(space, **m) for m in MEMORIES}
    lexeme_stats_refresh()
    return made
