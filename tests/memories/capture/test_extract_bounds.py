"""Capture's statement patterns stay linear on crafted text. A pattern that backtracks
exponentially would not fail, it would hang, so each extraction here runs under an alarm."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from memories.capture.exchanges import Exchange
from memories.capture.extract import from_user

ASKED = "Happy to help with the move. Where do you live?"


@contextmanager
def finishes_within(seconds: int) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise TimeoutError(f"the extraction ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_an_answer_of_many_hyphenated_capitals_is_read_at_once_or_refused():
    # The place pattern once split "A-B" two ways (a hyphen inside a word, or between two
    # words): each extra hyphen doubled the work of a reply that does not end as a place.
    crafted = "-".join(["Aa"] * 2_000) + " and more"
    place = "Stratford-upon-Avon"

    with finishes_within(5):
        refused = from_user(Exchange(index=0, user=crafted, assistant=""), asked=ASKED)
        answered = from_user(Exchange(index=1, user=f"{place}.", assistant=""), asked=ASKED)

    assert [c.value for c in refused if c.rule == "location"] == []
    assert [c.content for c in answered if c.rule == "location"] == [f"The user lives in {place}."]
