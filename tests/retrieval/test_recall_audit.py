"""Every recall and context pack is audited; `track` and the memory modes decide only
whether the query, the reasons and the access counts are kept."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.services import api_token_issue, user_mode_set
from memories import services as memory_services
from memories.models import MemoryStats
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, UserFactory

QUERY = "postgres index migration locked writes"


def recall(api, **extra):
    body = {"query": QUERY, "spaces": ["webshop"], **extra}
    response = api.post("/api/v1/recall/", body, format="json", HTTP_X_REQUEST_ID="recall-audit-1")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def recall_rows():
    return list(AuditEvent.objects.filter(action="recall").order_by("id"))


def test_a_tracked_recall_keeps_its_event_and_audits_it(api, store):
    """Given the default, when an owner recalls, then the event is kept, the access is
    counted, and the audit row points at the event with the memories returned."""
    data = recall(api)

    event = RecallEvent.objects.get()
    [row] = recall_rows()
    assert data["tracked"] is True
    assert (row.target_type, row.target_id) == ("recallevent", str(event.pk))
    assert (row.actor_label, row.space_slug, row.request_id) == ("owner", "webshop", "recall-audit-1")
    assert row.payload_data["after"]["memory_ids"] == [m["id"] for m in data["ranked_memory_list"]]
    assert row.payload_data["after"]["items"] == len(data["ranked_memory_list"])


def test_a_recall_asked_not_to_track_is_still_audited_without_its_query(api, store):
    """Given track: false, when an owner recalls, then no event is kept and nothing is
    counted, but an audit row says who recalled how much from which space."""
    data = recall(api, track=False)

    [row] = recall_rows()
    assert data["tracked"] is False
    assert data["ranked_memory_list"]
    assert not RecallEvent.objects.exists()
    assert not MemoryStats.objects.filter(access_count__gt=0).exists()
    assert (row.actor_label, row.space_slug, row.request_id, row.target_type) == (
        "owner", "webshop", "recall-audit-1", "recall")
    assert row.payload_data == {"after": {"items": len(data["ranked_memory_list"]),
                                          "tracked": False, "fail_safe": False}}


@pytest.mark.parametrize("mode", ["incognito", "off"])
def test_a_recall_in_incognito_or_off_is_audited_with_nothing_of_the_query(api, user, store, mode):
    """Given the user's mode is incognito or off, when it recalls, then the audit row
    exists and holds no word of the query, and no event is kept."""
    user_mode_set(actor=SYSTEM, user=user, mode=mode)

    data = recall(api, track=True)

    rows = recall_rows()
    assert data["tracked"] is False
    assert not RecallEvent.objects.exists()
    # Off reads nothing (the space is silenced): the row has no space and says which.
    assert [(r.space_slug, r.payload_data["after"].get("silenced")) for r in rows] == (
        [("webshop", None)] if mode == "incognito" else [("", ["webshop"])])
    stored = json.dumps([r.payload_data for r in rows])
    assert not any(word in stored for word in QUERY.split())
    assert "memory_ids" not in stored


def test_a_cached_answer_does_not_track_a_recall_made_after_going_incognito(api, user, store):
    """Given a recall answered and cached in assist mode, when the user turns incognito and
    asks the same again (a cache hit), then this recall leaves no event."""
    assert recall(api)["tracked"] is True
    user_mode_set(actor=SYSTEM, user=user, mode="incognito")

    again = recall(api)

    assert again["cached"] is True
    assert again["tracked"] is False
    assert RecallEvent.objects.count() == 1
    assert len(recall_rows()) == 2


def test_a_context_pack_is_audited_whatever_track_says(api, store):
    """Given track: false, when a context pack is built, then it is audited, untracked."""
    response = api.post("/api/v1/context-packs/", {"query": QUERY, "spaces": ["webshop"], "track": False},
                        format="json")

    assert response.status_code == 200
    [row] = recall_rows()
    assert (row.space_slug, row.target_type) == ("webshop", "recall")
    assert row.payload_data["after"]["tracked"] is False
    assert not RecallEvent.objects.exists()


def test_a_recall_that_reads_no_space_is_audited_once_without_a_space(db):
    """Given a user with no space, when it recalls, then one audit row without a space says
    so (tracked: the user's mode allows it, so it points at the kept event)."""
    loner = UserFactory(username="loner")
    _, raw = api_token_issue(user=loner, name="t")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    cache.clear()

    response = client.post("/api/v1/recall/", {"query": QUERY}, format="json")

    assert response.status_code == 200
    [row] = recall_rows()
    assert (row.actor_label, row.space_id, row.target_type) == ("loner", None, "recallevent")
    assert row.payload_data["after"]["items"] == 0


def test_an_untracked_recall_shows_in_the_space_timeline(api, store):
    """Given an untracked recall, when an owner reads the space timeline, then the recall's
    audit row is there (a tracked one shows as its recall event instead)."""
    recall(api, track=False)

    items = api.get("/api/v1/spaces/webshop/timeline/", {"action": "recall"}).json()["results"]

    assert [(i["kind"], i["action"], i["after"]["tracked"]) for i in items] == [("audit", "recall", False)]


def test_an_audit_row_of_one_space_does_not_name_the_other_spaces_read(api, user, store):
    """Given a recall across two spaces, when it is audited, then each space's row counts
    only its own items and names no other space."""
    SpaceFactory(slug="private-other", members={user: "owner"})
    memory_services.memory_create(actor=SYSTEM, data={
        "space": "private-other", "title": "Other space index note",
        "content": "Postgres index migrations in the other space lock writes too."})
    cache.clear()

    recall(api, spaces=["webshop", "private-other"], track=False)

    rows = {r.space_slug: r for r in recall_rows()}
    assert set(rows) == {"webshop", "private-other"}
    assert "private-other" not in json.dumps(rows["webshop"].payload_data)
