"""Concurrent writers on one execution: appends serialise on its row lock, starts on its prd_ref."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from governance.access import SYSTEM
from prd import services
from prd.models import PRDEvent, PRDExecution, PRDRun
from prd.services import EventInput
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db(transaction=True)


def in_threads(count: int, work) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def run(n: int) -> None:
        try:
            barrier.wait()
            work(n)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_appends_get_distinct_sequences_and_consistent_progress():
    space = SpaceFactory(slug="concurrent")
    execution = services.execution_start(actor=SYSTEM, space=space.slug, prd_ref="c.md").execution

    def work(n: int) -> None:
        for step in ("requirement_started", "test_failed", "test_passed", "requirement_completed"):
            services.event_append(actor=SYSTEM, execution_id=execution.id,
                                  data=EventInput(type=step, requirement_id=f"R{n}", summary=f"{step} R{n}"))

    assert in_threads(4, work) == []
    stored = PRDExecution.objects.get(pk=execution.id)
    sequences = sorted(PRDEvent.objects.filter(execution=stored).values_list("sequence", flat=True))
    assert sequences == list(range(1, 17))
    assert stored.event_count == 16
    assert sorted(stored.progress["completed"]) == ["R0", "R1", "R2", "R3"]
    assert not services.execution_rematerialise(actor=SYSTEM, execution_id=execution.id)


def test_concurrent_starts_of_one_prd_make_one_execution():
    space = SpaceFactory(slug="concurrent-start")

    def work(n: int) -> None:
        services.execution_start(actor=SYSTEM, space=space.slug, prd_ref="same.md", agent_id=f"agent-{n}")

    assert in_threads(4, work) == []
    assert PRDExecution.objects.filter(space=space).count() == 1
    assert sorted(PRDRun.objects.values_list("number", flat=True)) == [1, 2, 3, 4]
