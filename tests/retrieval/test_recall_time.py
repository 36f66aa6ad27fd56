"""Questions that name a time (retrieval.timeframe) find what was said then: the time
channel brings memories of that window in, and the time signal ranks them first."""

import pytest
from django.core.cache import cache

from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory

TURNS = [
    ("2023-11-01T18:00:00Z", "Tim: You should read Piranesi, it is strange and lovely."),
    ("2023-12-08T19:00:00Z", "Tim: My pick this month is The Left Hand of Darkness, read it over the "
                             "holidays."),
    ("2024-01-15T09:00:00Z", "Tim: Finished a thriller on the train, nothing I would recommend though."),
    ("2023-12-08T19:05:00Z", "Gina: No problem, Tim!"),
    ("2024-01-22T20:00:00Z", "Gina: The pottery class started, my first bowl collapsed."),
]


@pytest.fixture
def turns(space, on_commit):
    cache.clear()
    with on_commit():
        made = [make_memory(space, title=text[:40], content=text, occurred_at=said_at, kind="fact",
                            memory_type="episodic") for said_at, text in TURNS]
    lexeme_stats_refresh()
    return made


def recall(api, query: str, as_of: str = "2024-02-01T12:00:00Z", **extra) -> list[dict]:
    response = api.post("/api/v1/recall/", {"query": query, "as_of": as_of, "track": False, "k": 5, **extra},
                        format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]["ranked_memory_list"]


def test_a_date_in_the_question_ranks_what_was_said_that_day_first(api, turns):
    ranked = recall(api, "Which book did Tim recommend on 8th December 2023?")

    assert ranked[0]["id"] == turns[1].id
    assert ranked[0]["signals"]["time"] == 1.0
    assert "being said in the time asked about" in ranked[0]["rationale"]
    # Piranesi was recommended too, five weeks off: still found, ranked lower.
    earlier = next(item for item in ranked if item["id"] == turns[0].id)
    assert 0 < earlier["signals"]["time"] < 0.5


def test_a_relative_date_is_read_as_of_the_request(api, turns):
    ranked = recall(api, "what happened at the pottery class last week?", as_of="2024-01-29T12:00:00Z")
    later = recall(api, "what happened at the pottery class last week?", as_of="2024-03-29T12:00:00Z")

    assert ranked[0]["id"] == turns[4].id
    assert ranked[0]["signals"]["time"] == 1.0
    assert next(i for i in later if i["id"] == turns[4].id)["signals"]["time"] < 1.0


def test_a_question_without_a_time_gives_no_time_signal(api, turns):
    ranked = recall(api, "Which book did Tim recommend?")

    assert ranked
    assert {item["signals"]["time"] for item in ranked} == {0.0}


def test_word_statistics_follow_the_writes_without_the_scheduled_job(space, on_commit):
    from retrieval import channels
    from retrieval.models import SpaceTextStats

    def count(word: str) -> int:
        return channels.plan_lexical(channels.Scope((space.id,)), [word]).document_counts.get(word, 0)

    with on_commit():
        make_memory(space, title="Quokka sightings", content="A quokka was seen near the ferry.")
    with on_commit():
        make_memory(space, title="Quokka diet", content="The quokka eats leaves and grasses.")

    stats = SpaceTextStats.objects.get(space=space)
    assert (stats.documents, stats.stale) == (2, False)
    assert stats.average_length > 0
    assert (count("quokka"), count("ferri")) == (2, 1)


def test_a_rare_word_counts_more_in_a_short_memory_than_lost_in_a_long_one(api, space, on_commit):
    cache.clear()
    filler = " ".join(f"Paragraph {n} is about the weather, the garden and the neighbours."
                      for n in range(12))
    with on_commit():
        short = make_memory(space, title="Notes on the trip", content="We saw a wombat at dusk.")
        long = make_memory(space, title="Long letter home", content=f"{filler} Also a wombat, once.")
    lexeme_stats_refresh()

    ranked = {item["id"]: item["signals"]["lexical"] for item in recall(api, "wombat")}

    assert ranked[short.id] > ranked[long.id] > 0


def test_a_near_empty_turn_counts_in_proportion_to_what_it_says(api, turns, settings):
    """"Gina: No problem, Tim!" is close to any question naming Tim and says nothing."""
    question = "What did Tim recommend reading?"
    everything = {"thresholds": {"similarity": 0.0, "composite_min": 0.0}}  # all five, to compare
    ranked = recall(api, question, **everything)
    settings.SAM_RECALL = {**settings.SAM_RECALL, "SHORT_TEXT_LEXEMES": 0}
    cache.clear()
    unchecked = recall(api, question, **everything)

    short = next(item for item in unchecked if item["id"] == turns[3].id)
    kept = next(item for item in ranked if item["id"] == turns[3].id)
    # Three distinct words ("gina", "problem", "tim") of the six that count in full.
    assert kept["signals"]["semantic"] == pytest.approx(short["signals"]["semantic"] / 2, abs=2e-4)
    assert kept["signals"]["lexical"] == pytest.approx(short["signals"]["lexical"] / 2, abs=2e-4)
    assert kept["score"] < short["score"]
    assert ranked.index(kept) >= unchecked.index(short)


def test_a_window_anchored_to_an_event_starts_from_the_day_of_the_memory_that_tells_of_it(
        api, turns, space, on_commit):
    with on_commit():
        make_memory(space, title="Gina: 30th birthday at the bowling alley",
                            content="Gina: Had my 30th birthday party at a bowling alley last night, so fun!",
                            occurred_at="2024-01-14T10:00:00Z", kind="fact", memory_type="episodic")
    lexeme_stats_refresh()
    cache.clear()

    ranked = recall(api, "What happened in the week after Gina's birthday party?")

    # The week after 14 January: the thriller (15 January) is in it, the pottery class
    # (22 January) just after it, the party itself the day before.
    assert ranked[0]["id"] == turns[2].id
    assert ranked[0]["signals"]["time"] == 1.0
    assert all(item["signals"]["time"] < 1.0 for item in ranked[1:])


def test_a_large_space_is_recounted_at_a_pace_not_after_every_write(space, on_commit):
    """Counted a moment ago at 50,000 memories: the next write schedules the recount ~50 s on
    (writes meanwhile add nothing), rather than reading the whole space again at once."""
    from django.utils import timezone
    from django_q.models import Schedule

    from retrieval.models import SpaceTextStats

    SpaceTextStats.objects.update_or_create(
        space=space, defaults={"documents": 50_000, "average_length": 9.0, "stale": False,
                               "refreshed_at": timezone.now()})
    with on_commit():
        make_memory(space, title="Quokka sightings", content="A quokka was seen near the ferry.")
    with on_commit():
        make_memory(space, title="Quokka diet", content="The quokka eats leaves and grasses.")

    stats = SpaceTextStats.objects.get(space=space)
    assert (stats.documents, stats.stale) == (50_000, True)  # not recounted yet
    scheduled = Schedule.objects.get(func="retrieval.tasks.lexeme_stats_refresh")
    assert scheduled.kwargs == repr({"space_ids": [space.id]})
    assert 45 < (scheduled.next_run - timezone.now()).total_seconds() <= 50
