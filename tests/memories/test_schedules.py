"""`sam_schedules`: the periodic jobs, and the phase of the twice-a-minute embedding sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django_q.models import Schedule

pytestmark = pytest.mark.django_db

SWEEP = "memories.tasks.memory_embed_pending"


def sweeps() -> list[Schedule]:
    return list(Schedule.objects.filter(func=SWEEP).order_by("next_run"))


def test_the_pending_sweep_runs_at_every_scheduler_tick():
    # given two one-minute schedules (the scheduler allows no shorter period)...
    call_command("sam_schedules", verbosity=0)
    first, second = sweeps()
    assert first.minutes == second.minutes == 1
    # ...then half a minute apart, so one of them is due at every ~30 s tick
    gap = second.next_run - first.next_run
    assert timedelta(seconds=29) <= gap <= timedelta(seconds=31)


def test_running_the_command_again_keeps_every_schedule_and_its_phase():
    call_command("sam_schedules", verbosity=0)
    before = {s.name: s.next_run for s in Schedule.objects.all()}
    call_command("sam_schedules", verbosity=0)
    after = {s.name: s.next_run for s in Schedule.objects.all()}
    assert after == before
