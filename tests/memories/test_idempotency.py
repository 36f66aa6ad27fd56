"""The Idempotency-Key header on POST /api/v1/memories/ and /api/v1/memories/bulk/."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import IdempotencyKey
from memories import tasks
from memories.models import Memory
from tests.factories import SpaceFactory, UserFactory
from tests.personas import client_for
from tests.threads import in_thread

CREATE, BULK = "/api/v1/memories/", "/api/v1/memories/bulk/"
GOOD = {"space": "webshop", "title": "Use bUnit for component tests",
        "content": "Blazor components are tested with bUnit; ask alice.smith@example.com for access."}


def post(client: APIClient, path: str, body: dict, key: str | None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(path, body, format="json", **headers)


def test_a_retried_create_replays_the_first_answer_without_writing(api, space):
    first = post(api, CREATE, GOOD, "create-1")
    again = post(api, CREATE, GOOD, "create-1")

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Memory.objects.filter(space=space).count() == 1
    # The replay carries the first answer's redaction report (the email was redacted).
    assert again.json()["redaction_report"]
    assert "alice.smith" not in again.json()["memory"]["content"]


def test_without_a_key_a_retry_reinforces_what_the_first_stored(api, space):
    post(api, CREATE, GOOD, None)
    retry = post(api, CREATE, GOOD, None)

    assert retry.status_code == 200
    assert retry.json()["reinforced"] is True
    assert Memory.objects.filter(space=space).count() == 1
    assert Memory.objects.get().stats.reinforced_count == 1


def row(n: int, title: str | None = None) -> dict:
    return {**GOOD, "title": title or f"Row {n} title", "content": f"Row {n}: {GOOD['content']}"}


def test_a_retried_bulk_replays_the_first_answer_without_writing(api, space):
    items = [row(n) for n in range(3)] + [row(3, title="x")]
    first = post(api, BULK, {"items": items}, "bulk-1")
    again = post(api, BULK, {"items": items}, "bulk-1")

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert first.json()["created"] == 3
    assert Memory.objects.filter(space=space).count() == 3


def test_the_same_key_with_another_body_is_refused(api, space):
    post(api, BULK, {"items": [GOOD]}, "reused")
    response = post(api, BULK, {"items": [{**GOOD, "title": "Another title"}]}, "reused")
    on_create = post(api, CREATE, GOOD, "reused")

    assert response.status_code == on_create.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert on_create.json()["error"]["code"] == "idempotency_key_reused"
    assert Memory.objects.filter(space=space).count() == 1


def test_keys_are_scoped_to_the_user_who_sent_them(api, space):
    stranger = UserFactory(username="other-writer")
    SpaceFactory(slug="other-space", members={stranger: "owner"})
    mine = post(api, CREATE, GOOD, "shared-key")
    theirs = post(client_for(stranger), CREATE, {**GOOD, "space": "other-space"}, "shared-key")

    assert theirs.status_code == 201
    assert theirs.json()["memory"]["id"] != mine.json()["memory"]["id"]
    assert theirs.json()["memory"]["space"] != mine.json()["memory"]["space"]
    assert Memory.objects.count() == 2


def test_the_stored_answer_keeps_no_memory_text(api, space):
    post(api, CREATE, GOOD, "no-text")
    post(api, BULK, {"items": [{**GOOD, "title": "Bulk row title"}]}, "no-text-bulk")

    stored = "".join(repr(row.answer) for row in IdempotencyKey.objects.all())
    assert IdempotencyKey.objects.count() == 2
    for text in ("bUnit", "Blazor", "alice", "Bulk row title"):
        assert text not in stored


def test_a_refused_request_does_not_use_up_its_key(api, space):
    refused = post(api, CREATE, {**GOOD, "content": "short"}, "fix-and-retry")
    fixed = post(api, CREATE, GOOD, "fix-and-retry")

    assert refused.status_code == 400
    assert fixed.status_code == 201
    assert Memory.objects.filter(space=space).count() == 1


def test_a_key_expires_after_a_day_and_is_pruned(api, space):
    post(api, CREATE, GOOD, "old-key")
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    post(api, CREATE, row(1, title="Fresh key"), "recent-key")

    assert tasks.idempotency_keys_prune() == {"deleted": 1}
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["recent-key"]
    # The key is gone: the request runs again (and reinforces what it stored the first time).
    again = post(api, CREATE, GOOD, "old-key")
    assert again.status_code == 200
    assert again.json()["reinforced"] is True
    assert "Idempotent-Replayed" not in again
    assert Memory.objects.filter(space=space).count() == 2


def test_an_invalid_key_is_refused(api, space):
    assert post(api, CREATE, GOOD, "x" * 256).status_code == 400
    assert Memory.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_write_once():
    user = UserFactory(username="concurrent-writer")
    SpaceFactory(slug="webshop", members={user: "owner"})
    items = [row(n, title=f"Concurrent row {n}") for n in range(3)]
    answers: dict[str, object] = {}
    first_answered, release, second_done = threading.Event(), threading.Event(), threading.Event()
    first_client, second_client = client_for(user), client_for(user)
    errors: list[BaseException] = []

    def first() -> None:
        # Holds its transaction open after answering, as a slow commit would.
        with transaction.atomic():
            answers["first"] = post(first_client, BULK, {"items": items}, "race")
            first_answered.set()
            release.wait(timeout=30)

    def second() -> None:
        answers["second"] = post(second_client, BULK, {"items": items}, "race")
        second_done.set()

    threads = [in_thread(first, errors)]
    assert first_answered.wait(timeout=30)
    threads.append(in_thread(second, errors))
    # The second request waits on the first's uncommitted key ...
    assert not second_done.wait(timeout=1.0)
    release.set()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []

    # ... and once it commits, replays its answer instead of writing again.
    assert answers["first"].status_code == answers["second"].status_code == 201
    assert answers["second"].json() == answers["first"].json()
    assert Memory.objects.count() == 3
