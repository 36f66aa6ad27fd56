"""Time windows read out of questions (retrieval.timeframe): dates, relative and anchored."""

from datetime import UTC, datetime

import pytest

from retrieval import timeframe

NOW = datetime(2023, 11, 2, 15, 30, tzinfo=UTC)  # a Thursday


@pytest.mark.parametrize(("question", "window", "rest"), [
    ("What did Andrew do on the Monday before July 24, 2023?", "2023-07-17", "What did Andrew do?"),
    ("Which book did Tim recommend on 8th December 2022?", "2022-12-08", "Which book did Tim recommend?"),
    ("What happened on 2023-07-24?", "2023-07-24", "What happened?"),
    ("Who called on the 3rd of March, 2023", "2023-03-03", "Who called"),
    ("What did Mia cook in May 2023?", "2023-05-01 to 2023-05-31", "What did Mia cook?"),
    ("what about in May?", "2023-05-01 to 2023-05-31", "what about?"),
    # A month without a year is the latest one not after now.
    ("plans for December 8?", "2022-12-08", "plans for?"),
    ("Where was Leo living in early 2023?", "2023-01-01 to 2023-04-30", "Where was Leo living?"),
    ("the summer of 2023", "2023-06-01 to 2023-08-31", ""),
    ("What did we do last week?", "2023-10-23 to 2023-10-29", "What did we do?"),
    ("anything from last month", "2023-10-01 to 2023-10-31", "anything"),
    ("what did I say yesterday", "2023-11-01", "what did I say"),
    ("who did I meet last Monday", "2023-10-30", "who did I meet"),
    ("what happened 3 weeks ago", "2023-10-09 to 2023-10-14", "what happened"),
    ("What happened the week after 8 December 2022?", "2022-12-09 to 2022-12-15", "What happened?"),
    ("the day before 2023-05-01", "2023-04-30", ""),
    ("two days after July 4, 2023", "2023-07-06", ""),
    ("the Friday after 2023-07-24", "2023-07-28", ""),
])
def test_a_question_names_a_window(question, window, rest):
    frame = timeframe.find(question, now=NOW)

    assert frame is not None
    assert frame.describe() == window
    assert timeframe.without(question, frame) == rest


@pytest.mark.parametrize("question", [
    "How do I set up pytest fixtures?",
    "I may go to the gym",
    "we march on regardless",
    "Which port does the service use, 8080?",
    "What is 2023 minus 1990?",
])
def test_words_that_only_look_like_dates_name_no_window(question):
    assert timeframe.find(question, now=NOW) is None


@pytest.mark.parametrize(("question", "now"), [
    ("what happened yesterday", datetime(1, 1, 1, tzinfo=UTC)),
    ("anything from last year", datetime(1, 6, 1, tzinfo=UTC)),
    ("what did I say today", datetime(9999, 12, 31, tzinfo=UTC)),
    ("plans for this month", datetime(9999, 12, 31, tzinfo=UTC)),
])
def test_a_window_off_the_calendar_is_no_window_not_an_error(question, now):
    assert timeframe.find(question, now=now) is None


@pytest.mark.parametrize(("question", "event", "window"), [
    ("What news came up in the week after Amara's birthday party?", "Amara's birthday party",
     "2024-05-18 to 2024-05-24"),
    ("What happened the week before Nate's trip to Ljubljana?", "Nate's trip to Ljubljana",
     "2024-05-10 to 2024-05-16"),
    ("What did Tim say the day before he left for Oslo", "he left for Oslo", "2024-05-16"),
    ("Where did we eat the Monday after the launch party?", "the launch party", "2024-05-20"),
])
def test_a_window_anchored_to_an_event_is_read_from_the_events_day(question, event, window):
    anchor = timeframe.find_event(question)

    assert anchor is not None
    assert anchor.event == event
    assert anchor.window(datetime(2024, 5, 17, tzinfo=UTC).date()).describe() == window
    assert timeframe.without(question, anchor.window(datetime(2024, 5, 17, tzinfo=UTC).date())).count(
        event) == 0


@pytest.mark.parametrize("question", [
    "What did I do the week after 8 December 2023?",  # a date: find() reads it
    "What happened the week after it?",  # no event to find
    "Which book did Tim recommend?",
])
def test_no_event_anchor_where_none_is_named(question):
    assert timeframe.find_event(question) is None
