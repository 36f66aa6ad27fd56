"""Categories (seed 002, Phase 5): seed 002's defaults in project spaces, memories placed on
write by keywords, summaries drawn from their strongest memories, curators' own categories,
and recall's tiered answer for broad questions."""

import pytest
from django.core.cache import cache

from memories.models import MemoryCategory
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import SpaceFactory, make_memory
from tests.personas import member_client

CATEGORIES = "/api/v1/spaces/{}/categories/"


@pytest.fixture
def placed(space, on_commit):
    cache.clear()
    with on_commit():
        made = {
            "index": make_memory(space, title="Create Postgres indexes concurrently", tags=["postgres"],
                                 content="A migration that ran CREATE INDEX locked the events table for 9 "
                                         "minutes; use AddIndexConcurrently on large tables."),
            "pool": make_memory(space, title="Pool database connections",
                                content="Run PgBouncer in transaction mode in front of the database."),
            "jwt": make_memory(space, title="Short-lived access tokens", tags=["auth"],
                               content="Access tokens live 15 minutes; refresh tokens rotate on login."),
            "lunch": make_memory(space, title="Team lunch on Fridays",
                                 content="The team eats together on Fridays at the canal place."),
        }
    lexeme_stats_refresh()
    return made


def names_of(memory) -> set[str]:
    return set(MemoryCategory.objects.filter(memory=memory).values_list("category__name", flat=True))


def test_a_project_space_sorts_its_memories_into_seed_002s_categories(api, space, placed):
    listed = {c["name"]: c for c in api.get(CATEGORIES.format(space.slug)).json()["results"]}

    assert {"authentication", "database", "api", "testing", "frontend", "devops", "architecture",
            "performance", "debugging", "standards"} == set(listed)
    assert "database" in names_of(placed["index"])
    assert names_of(placed["pool"]) >= {"database"}
    assert names_of(placed["jwt"]) >= {"authentication"}
    assert names_of(placed["lunch"]) == set()
    assert listed["database"]["item_count"] == 2
    by_category = api.get("/api/v1/memories/", {"category": "database"}).json()["results"]
    assert {m["id"] for m in by_category} == {placed["index"].id, placed["pool"].id}


def test_a_summary_lists_the_strongest_memories_a_reader_may_see(api, space, placed):
    viewer = member_client(space, "viewer", "cat-viewer")
    api.post(f"/api/v1/memories/{placed['pool'].id}/restrict/", {"restricted_to": "curator"}, format="json")

    def database(client) -> dict:
        listed = client.get(CATEGORIES.format(space.slug)).json()["results"]
        return next(c for c in listed if c["name"] == "database")

    mine, theirs = database(api), database(viewer)
    api.post(f"/api/v1/memories/{placed['index'].id}/archive/", {"reason": "done"}, format="json")
    after_archive = database(api)

    assert mine["summary"].startswith("- ")
    assert "Create Postgres indexes concurrently: " in mine["summary"]
    assert "Pool database connections: " in mine["summary"]
    assert mine["item_count"] == 2
    # A restricted memory is neither quoted nor counted for someone who may not read it.
    assert "Pool database connections" not in theirs["summary"]
    assert theirs["item_count"] == 1
    # Archived: gone from the summary at once, not at the next weekly run.
    assert "Create Postgres indexes" not in after_archive["summary"]
    assert after_archive["item_count"] == 1


def test_curators_add_their_own_categories_and_memories_are_placed_again(api, space, placed, on_commit):
    contributor = member_client(space, "contributor", "cat-contributor")
    body = {"name": "rituals", "display_name": "Team rituals", "keywords": ["lunch", "standup", "retro"]}

    with on_commit():  # the job that places the space's memories again runs as it commits
        created = api.post(CATEGORIES.format(space.slug), body, format="json")
    placed_by_words = names_of(placed["lunch"])
    again = api.post(CATEGORIES.format(space.slug), body, format="json")
    refused = contributor.post(CATEGORIES.format(space.slug), {**body, "name": "other"}, format="json")
    no_words = api.post(CATEGORIES.format(space.slug), {**body, "name": "empty", "keywords": []},
                        format="json")
    with on_commit():
        renamed = api.patch(CATEGORIES.format(space.slug) + "rituals/", {"keywords": ["standup"]},
                            format="json")

    assert created.status_code == 201
    assert again.status_code == 409
    assert refused.status_code == 403
    assert no_words.status_code == 400
    assert "rituals" in placed_by_words
    assert renamed.json()["keywords"] == ["standup"]
    assert "rituals" not in names_of(placed["lunch"])
    assert api.delete(CATEGORIES.format(space.slug) + "rituals/").status_code == 204
    assert api.delete(CATEGORIES.format(space.slug) + "rituals/").status_code == 404


def test_a_memory_no_keyword_places_goes_where_its_close_neighbours_are(space, placed, on_commit):
    with on_commit():
        pooled = make_memory(space, title="PgBouncer pool per service",
                             content="Each service gets a PgBouncer pool of 20 in transaction mode.")
        dinner = make_memory(space, title="Team dinner", content="The team had dinner at the canal place.")

    links = {link.category.name: link.relevance
             for link in MemoryCategory.objects.filter(memory=pooled).select_related("category")}
    # Close to "Pool database connections" (database, by keyword), and no keyword of its own.
    assert list(links) == ["database"]
    assert 0.3 <= links["database"] < 0.5  # cosine × the neighbour's .5: below any keyword placement
    # Close only to a memory in no category: in none either.
    assert names_of(dinner) == set()


def test_a_removed_built_in_stays_removed_until_a_curator_makes_it_again(api, space, placed):
    url = CATEGORIES.format(space.slug)

    assert api.delete(url + "database/").status_code == 204
    after = {c["name"] for c in api.get(url).json()["results"]}
    placed_after = names_of(placed["index"])
    removed_again = api.delete(url + "database/")
    again = api.post(url, {"name": "database", "keywords": ["postgres", "index"]}, format="json")

    # Listing (which makes the defaults) does not bring it back; nothing is placed in it.
    assert "database" not in after
    assert "database" not in placed_after
    assert removed_again.status_code == 404
    assert again.status_code == 201, again.content
    assert again.json()["keywords"] == ["index", "postgres"]
    assert again.json()["builtin"] is True


def test_a_personal_space_starts_without_seed_002s_categories(api, user, on_commit):
    mine = SpaceFactory(slug="me-cats", kind="user", members={user: "owner"})
    with on_commit():
        make_memory(mine, title="Prefers dark roast", content="Dana drinks dark roast coffee, no sugar.")

    assert api.get(CATEGORIES.format(mine.slug)).json()["results"] == []


def test_a_tiered_recall_answers_a_broad_question_with_category_summaries_first(api, space, placed):
    answer = api.post("/api/v1/recall/", {"query": "what do we know about our database?", "tiered": True,
                                          "track": False, "as_of": "2026-11-22T12:00:00Z"},
                      format="json").json()["data"]
    plain = api.post("/api/v1/recall/", {"query": "what do we know about our database?", "track": False,
                                         "as_of": "2026-11-22T12:00:00Z"}, format="json").json()["data"]

    first = answer["category_summaries"][0]
    assert (first["space"], first["name"]) == (space.slug, "database")
    assert "Pool database connections" in first["summary"]
    assert set(first["items"]) <= {placed["index"].id, placed["pool"].id}
    assert first["items"]
    assert plain["category_summaries"] == []


def test_a_tiered_summary_quotes_only_what_the_recall_itself_may_return(api, space, placed):
    """A filter on the recall (here: tag postgres) holds for the summaries too."""
    body = {"query": "what do we know about our database?", "tiered": True, "track": False,
            "as_of": "2026-11-22T12:00:00Z", "filters": {"tags": ["postgres"]},
            "thresholds": {"similarity": 0.0, "composite_min": 0.0}}

    answer = api.post("/api/v1/recall/", body, format="json").json()["data"]

    database = next(c for c in answer["category_summaries"] if c["name"] == "database")
    assert "Create Postgres indexes concurrently" in database["summary"]
    assert "Pool database connections" not in database["summary"]  # no postgres tag


def test_a_summary_line_says_a_title_its_summary_repeats_once(api, space, on_commit):
    with on_commit():
        make_memory(space, title="Vacuum the events table nightly", tags=["postgres"],
                    summary="Vacuum the events table nightly, or its indexes bloat.",
                    content="The events table gets a VACUUM ANALYZE every night; the database indexes bloat "
                            "otherwise.")
    listed = api.get(CATEGORIES.format(space.slug)).json()["results"]
    line = next(line for c in listed for line in c["summary"].splitlines() if "Vacuum" in line)

    assert line == "- Vacuum the events table nightly, or its indexes bloat."
