"""Batch jobs sized by their measured rate and bounded by a time budget (core.jobs)."""

from __future__ import annotations

import time

import pytest
from django.test import override_settings

from core.jobs import Pacer, job_budget_seconds


def test_the_budget_is_a_fraction_of_the_timeout():
    with override_settings(SAM_JOB_BUDGET_FRACTION=0.4):
        assert job_budget_seconds(120) == pytest.approx(48)
    with override_settings(SAM_JOB_BUDGET_FRACTION=0.5, Q_CLUSTER={"timeout": 30}):
        assert job_budget_seconds() == pytest.approx(15)


def test_batches_follow_the_measured_rate_within_bounds():
    pacer = Pacer(budget_seconds=60, first=4, most=100, commit_seconds=3)
    assert pacer.next_size() == 4
    pacer.done(4, 0.2)  # 20 items/s: 60 wanted in 3 s, but at most four times the last batch
    assert pacer.next_size() == 16
    pacer.done(16, 0.4)  # 40 items/s: 120 wanted, capped at `most`
    assert pacer.next_size() == 64
    pacer.done(64, 0.5)
    assert pacer.next_size() == 100
    pacer.done(100, 50.0)  # the worker slowed down to 2 items/s: 6 a batch
    assert pacer.next_size() == 6
    assert pacer.rate == pytest.approx(2.0)


def test_no_batch_starts_once_the_budget_is_spent_but_the_first_always_does():
    pacer = Pacer(budget_seconds=0, first=8, most=8, commit_seconds=3)
    assert pacer.next_size() == 8  # a job always moves on
    pacer.done(8, 0.01)
    assert pacer.next_size() == 0
    later = Pacer(budget_seconds=0.05, first=8, most=8, commit_seconds=3)
    later.done(8, 0.01)
    assert later.next_size() == 8
    time.sleep(0.06)
    assert later.next_size() == 0


@pytest.mark.django_db
def test_word_statistics_hand_the_spaces_left_to_a_follow_up_once_the_budget_is_spent():
    """Given three spaces and no time budget, the job recounts the first space, hands the
    other two to a follow-up (run inline in the suite), and every space ends up recounted."""
    from retrieval.models import SpaceTextStats
    from retrieval.tasks import lexeme_stats_refresh
    from tests.factories import SpaceFactory, make_memory

    spaces = [SpaceFactory(slug=f"budget-words-{n}") for n in range(3)]
    for space in spaces:
        make_memory(space, title=f"Words of {space.slug}", content="Rate-sized batches commit often.")
    SpaceTextStats.objects.filter(space__in=spaces).update(stale=True)

    with override_settings(SAM_JOB_BUDGET_FRACTION=0):
        counted = lexeme_stats_refresh(space_ids=[space.pk for space in spaces])

    assert counted["handed_over"] == 2
    assert str(spaces[0].pk) in counted
    assert str(spaces[1].pk) not in counted
    assert not SpaceTextStats.objects.filter(space__in=spaces, stale=True).exists()
    assert SpaceTextStats.objects.filter(space__in=spaces).count() == 3


@pytest.mark.django_db
def test_the_retention_sweep_goes_on_in_a_follow_up_after_the_last_space_done():
    """Given two spaces past their retention window and no time budget, the sweep purges the
    first and hands the second to a follow-up (run inline in the suite), which purges it."""
    from datetime import timedelta

    from django.utils import timezone

    from governance import spaces as space_services
    from governance.access import SYSTEM
    from governance.tasks import retention_sweep
    from memories.models import Memory
    from tests.factories import SpaceFactory, make_memory

    spaces = [SpaceFactory(slug=f"budget-retention-{n}") for n in range(2)]
    old = []
    for space in spaces:
        space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"retention_days": 7})
        old.append(make_memory(space, title="Old note", content="Written long ago.").pk)
    Memory.objects.filter(pk__in=old).update(updated_at=timezone.now() - timedelta(days=8))

    with override_settings(SAM_JOB_BUDGET_FRACTION=0):
        purged = retention_sweep()

    assert list(purged) == [spaces[0].slug]  # this job did the first space only
    assert not Memory.objects.filter(pk__in=old).exists()  # the follow-up did the second
