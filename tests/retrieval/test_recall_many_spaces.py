"""Recall by a user in many spaces: the right memories, the same answer as one search over
every space's tokens, and a number of SQL statements that does not grow with the spaces."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from governance.access import SYSTEM
from governance.services import membership_grant
from retrieval import channels
from retrieval.context import RecallContext
from retrieval.pipeline import RecallRequest, _scope, recall
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import SpaceFactory, UserFactory, make_memory

SPACES = 200
FEW = 20
# (space number, title, content, tags): spread over the spaces, several sharing words,
# so the lexical channel ranks rows of different spaces against each other.
MEMORIES = [
    (3, "Dana is vegetarian", "Dana is vegetarian and does not eat fish; suggest vegetarian recipes.",
     ["food"]),
    (41, "Create Postgres indexes concurrently",
     "A migration that ran CREATE INDEX locked writes for 9 minutes. Use AddIndexConcurrently.",
     ["postgres", "migrations"]),
    (77, "Postgres vacuum settings for the events table",
     "Autovacuum on the events table runs every hour; postgres needs a lower scale factor there.",
     ["postgres"]),
    (118, "Deploy the billing worker on Tuesdays", "The billing worker deploys on Tuesdays after the "
     "postgres migrations ran.", ["deploy", "billing"]),
    (156, "MudSnackbar preferred for alerts", "Use MudSnackbar instead of MudDialog for alerts in Blazor.",
     ["ui"]),
    (199, "Fish recipes for the team lunch", "The team lunch on Friday has fish recipes; Dana gets the "
     "vegetarian one.", ["food"]),
    (12, "Billing invoices are sealed at month end", "Invoices close at month end; billing reruns nothing "
     "after the seal.", ["billing"]),
]
QUERIES = ["what does Dana eat", "postgres migrations locked the events table",
           "when does the billing worker deploy", "alerts in blazor", "fish recipes vegetarian"]


@pytest.fixture
def many(db, on_commit):
    """A reader in SPACES spaces (memories in a few of them), and one in the first FEW."""
    cache.clear()
    reader, few = UserFactory(username="reader-many"), UserFactory(username="reader-few")
    spaces = [SpaceFactory(slug=f"team-{n:03d}", members={reader: "viewer"}) for n in range(SPACES)]
    for space in spaces[:FEW]:
        membership_grant(actor=SYSTEM, space=space, role="viewer", user=few)
    with on_commit():
        for number, title, content, tags in MEMORIES:
            make_memory(spaces[number], title=title, content=content, tags=tags)
    lexeme_stats_refresh()
    return reader, few, spaces


def ask(user, query: str, spaces: tuple[str, ...] = ()):
    return recall(actor=user, request=RecallRequest(context=RecallContext(query=query), spaces=spaces, k=5),
                  use_cache=False)


def test_a_recall_naming_no_space_finds_the_memory_wherever_it_is(many):
    """Given a reader in 200 spaces, when they ask without naming a space, then the memory
    that answers comes first, from the space that holds it."""
    reader, _, _ = many

    result = ask(reader, "Dana vegetarian fish")

    assert len(result.spaces) == SPACES
    assert [item.row["title"] for item in result.items[:2]] == \
        ["Dana is vegetarian", "Fish recipes for the team lunch"]
    assert result.items[0].row["space_slug"] == "team-003"


def test_naming_every_space_gives_the_answer_of_naming_none(many):
    """Given a reader in 200 spaces, when they name all of them (rights of the named spaces
    only) and when they name none (all their rights), then ids and scores are the same."""
    reader, _, spaces = many
    slugs = tuple(space.slug for space in spaces)

    for query in QUERIES:
        named, unnamed = ask(reader, query, slugs), ask(reader, query)

        assert [(i.id, round(i.score, 6)) for i in named.items] == \
            [(i.id, round(i.score, 6)) for i in unnamed.items]
        assert named.items


def test_a_recall_naming_spaces_reads_only_those(many):
    """Given a reader in 200 spaces, when they name two, then only memories of those two come back."""
    reader, _, _ = many

    result = ask(reader, "postgres migrations billing", ("team-041", "team-118"))

    assert result.spaces == ["team-041", "team-118"]
    assert {item.row["space_slug"] for item in result.items} == {"team-041", "team-118"}


def test_the_lexical_channel_finds_what_one_search_for_every_token_finds(many):
    """Given 200 spaces, each with its own search keys, when the lexical channel searches
    space by space, then it returns the same ids in the same order as one search for the
    tokens of every space (the way it searched before)."""
    reader, _, _ = many
    found_any = False
    for query in QUERIES:
        scope = _scope(reader, RecallRequest(context=RecallContext(query=query))).scope
        with transaction.atomic():
            plan = channels.plan_lexical(scope, channels.query_lexemes(query))
            where, params = scope.where()
            one_search = channels._ids(
                f"SELECT m.id FROM {channels.MEMORY} m, CAST(%s AS tsquery) q "
                f"WHERE {where} AND m.search_vector @@ q "
                f"ORDER BY ts_rank_cd('{channels.RANK_WEIGHTS}', m.search_vector, q, 32) DESC, m.id LIMIT %s",
                [channels.tsquery_text(plan.tokens_of(plan.chosen)), *params, 50])

            by_space = channels.lexical_candidates(scope, plan, 50)

        assert by_space == one_search
        found_any = found_any or bool(by_space)
    assert found_any


def test_the_statements_of_a_recall_do_not_grow_with_the_spaces(many):
    """Given a reader in 200 spaces and one in 20, when each recalls naming no space, then
    both recalls run the same number of SQL statements (every channel asks once for all
    the spaces, not once per space)."""
    reader, few, _ = many
    # Each process reads the spaces' data keys once (then keeps them for a while), as a server has.
    ask(reader, "warm up")

    with CaptureQueriesContext(connection) as in_many:
        result = ask(reader, "postgres migrations locked the events table")
    with CaptureQueriesContext(connection) as in_few:
        ask(few, "postgres migrations locked the events table")

    assert result.items
    assert len(in_many) == len(in_few)


def test_the_exact_phrase_channel_keeps_every_run_within_its_budget_and_whole_lengths_beyond():
    """Given a 12-word question, when it is asked in 50 spaces, then every run of 1–8 words
    is looked up (as before); in 1,000 spaces (70,000 keyed tokens), then only whole lengths
    of runs that fit the shared budget, two-word runs first."""
    grams = channels.phrase_ngrams("how do we deploy the billing worker to production with postgres "
                                   "migrations")

    assert channels.exact_grams(grams, 50) == grams
    kept = channels.exact_grams(grams, 1000)
    assert kept == sorted(gram for gram in grams if len(gram.split(" ")) == 2)
    three = channels.exact_grams(grams, 400)
    assert {len(gram.split(" ")) for gram in three} == {2, 3}
    assert len(three) * 400 <= channels.EXACT_TOKEN_BUDGET
