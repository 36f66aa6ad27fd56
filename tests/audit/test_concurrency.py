"""Appends from several connections at once still form one valid chain."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import transaction

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.audit.services import audit_record
from governance.audit.verify import audit_chain_verify
from tests.threads import assert_second_waits, in_thread

pytestmark = pytest.mark.django_db(transaction=True)




def test_two_threads_appending_at_once_give_one_valid_chain():
    per_thread = 25
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def append(name: str) -> Callable[[], None]:
        def work() -> None:
            start.wait()
            for n in range(per_thread):
                with transaction.atomic():
                    audit_record("edit", actor=SYSTEM, target_type="memory", target_id=f"{name}-{n}")

        return work

    threads = [in_thread(append(name), errors) for name in ("a", "b")]
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []

    report = audit_chain_verify()
    assert report.intact, report.broken
    # The chain may also hold an event from before the threads (the system data key's creation).
    assert AuditEvent.objects.filter(target_type="memory", action="edit").count() == 2 * per_thread
    assert report.events == AuditEvent.objects.count()
    prev_hashes = list(AuditEvent.objects.values_list("prev_hash", flat=True))
    assert len(set(prev_hashes)) == len(prev_hashes)  # no two events share a parent: no fork


def test_an_append_waits_for_the_open_transaction_that_appended_before_it():
    first_appended, release_first = threading.Event(), threading.Event()
    second_done = threading.Event()
    events: dict[str, AuditEvent] = {}

    def first() -> None:
        with transaction.atomic():
            events["first"] = audit_record("edit", actor=SYSTEM, target_id="first")
            first_appended.set()
            release_first.wait(timeout=30)

    def second() -> None:
        first_appended.wait(timeout=30)
        with transaction.atomic():
            events["second"] = audit_record("edit", actor=SYSTEM, target_id="second")
        second_done.set()

    # The second append must block on the chain lock while the first transaction is open.
    assert_second_waits(first, second, second_done=second_done, release=release_first, timeout=30)
    assert events["second"].prev_hash == events["first"].hash
    assert audit_chain_verify().intact
