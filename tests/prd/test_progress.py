"""The progress fold: each event type's transition, refusals, and the JSON round trip."""

import pytest

from prd.progress import EventFacts, Fold, TransitionRefused, natural_key, replay

counter = iter(range(1, 10_000))


def event(type_: str, requirement: str = "", resolves: str | None = None) -> EventFacts:
    return EventFacts(id=f"evt_{next(counter)}", type=type_, requirement_id=requirement, resolves=resolves)


def folded(*events: EventFacts, declared=("R1", "R2", "R3")) -> Fold:
    return replay(events, declared=declared)


def test_declared_requirements_start_not_started_in_prd_order():
    fold = folded(declared=("R2", "R10", "R1"))
    assert fold.progress() == {"completed": [], "in_progress": [], "blocked": [],
                               "not_started": ["R2", "R10", "R1"]}


def test_a_requirement_moves_through_started_blocked_resolved_completed():
    fold = folded(event("requirement_started", "R1"))
    assert fold.progress()["in_progress"] == ["R1"]
    blocker = event("blocker_hit", "R1")
    fold.apply(blocker)
    assert fold.progress()["blocked"] == ["R1"]
    outcome = fold.apply(event("blocker_resolved", "R1"))
    assert outcome.resolves == blocker.id
    assert fold.progress()["in_progress"] == ["R1"]
    fold.apply(event("requirement_completed", "R1"))
    assert fold.progress() == {"completed": ["R1"], "in_progress": [], "blocked": [],
                               "not_started": ["R2", "R3"]}


def test_a_blocked_requirement_returns_to_not_started_when_it_had_not_started():
    fold = folded(event("blocker_hit", "R2"))
    assert fold.progress()["blocked"] == ["R2"]
    fold.apply(event("blocker_resolved", "R2"))
    assert "R2" in fold.progress()["not_started"]


def test_a_requirement_stays_blocked_until_its_last_blocker_is_resolved():
    first, second = event("blocker_hit", "R1"), event("blocker_hit", "R1")
    fold = folded(event("requirement_started", "R1"), first, second)
    assert fold.apply(event("blocker_resolved", "R1", resolves=second.id)).resolves == second.id
    assert fold.progress()["blocked"] == ["R1"]
    assert fold.apply(event("blocker_resolved", "R1")).resolves == first.id
    assert fold.progress()["in_progress"] == ["R1"]


@pytest.mark.parametrize(("history", "refused", "message"), [
    ((), event("requirement_completed", "R1"), "never started"),
    ((event("requirement_started", "R1"),), event("requirement_started", "R1"), "already in progress"),
    ((event("requirement_started", "R1"), event("requirement_completed", "R1")),
     event("requirement_completed", "R1"), "already completed"),
    ((event("requirement_started", "R1"), event("blocker_hit", "R1")),
     event("requirement_completed", "R1"), "blocked"),
    ((event("requirement_started", "R1"), event("requirement_completed", "R1")),
     event("blocker_hit", "R1"), "completed and cannot be blocked"),
    ((), event("blocker_resolved", "R1"), "no open blocker on requirement 'R1'"),
    ((), event("blocker_resolved"), "no open blocker on the execution"),
    ((), event("rollback", "R1"), "never started"),
    ((event("blocker_hit", "R1"),), event("rollback", "R1"), "never started"),
])
def test_an_event_that_does_not_fit_is_refused_and_changes_nothing(history, refused, message):
    fold = folded(*history)
    before = fold.to_json()
    with pytest.raises(TransitionRefused, match=message) as caught:
        fold.apply(refused)
    assert caught.value.conflict
    assert fold.to_json() == before


def test_start_and_completion_need_a_requirement_id():
    with pytest.raises(TransitionRefused) as caught:
        folded().apply(event("requirement_started"))
    assert (caught.value.field, caught.value.conflict) == ("requirement_id", False)


def test_a_named_blocker_must_be_open_and_on_the_named_requirement():
    blocker = event("blocker_hit", "R1")
    fold = folded(blocker)
    with pytest.raises(TransitionRefused) as wrong_requirement:
        fold.apply(event("blocker_resolved", "R2", resolves=blocker.id))
    assert not wrong_requirement.value.conflict
    fold.apply(event("blocker_resolved", resolves=blocker.id))
    with pytest.raises(TransitionRefused, match="not open"):
        fold.apply(event("blocker_resolved", resolves=blocker.id))


def test_rollback_reopens_a_completed_requirement():
    fold = folded(event("requirement_started", "R1"), event("requirement_completed", "R1"),
                  event("rollback", "R1"))
    assert fold.progress()["in_progress"] == ["R1"]


def test_a_pass_or_a_completion_closes_the_failure_streak_at_its_first_failure():
    first, again = event("test_failed", "R1"), event("error_encountered", "R1")
    fold = folded(event("requirement_started", "R1"), first, again)
    assert fold.apply(event("test_passed", "R1")).resolves == first.id
    assert fold.apply(event("test_passed", "R1")).resolves is None
    third = event("test_failed", "R1")
    fold.apply(third)
    assert fold.apply(event("requirement_completed", "R1")).resolves == third.id


def test_requirements_named_only_by_events_follow_the_declared_ones_in_natural_order():
    fold = folded(event("test_failed", "R10"), event("requirement_started", "R9"), declared=("B",))
    assert fold.requirements() == ["B", "R9", "R10"]
    assert natural_key("R2") < natural_key("R10")


def test_a_dropped_requirement_stays_only_if_an_event_named_it():
    fold = folded(event("requirement_started", "R1"))
    fold.declare(["R3"])
    assert fold.requirements() == ["R3", "R1"]


def test_the_fold_round_trips_through_json():
    fold = folded(event("requirement_started", "R1"), event("blocker_hit", "R1"), event("test_failed", "R2"),
                  event("blocker_hit"))
    again = Fold.from_json(fold.to_json())
    assert again == fold
    assert again.progress() == fold.progress()
