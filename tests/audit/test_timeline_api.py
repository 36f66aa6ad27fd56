"""GET /api/v1/memories/{id}/timeline/ and /api/v1/spaces/{slug}/timeline/."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.audit.services import audit_record
from governance.roles import Role
from memories.restrictions import memory_restrict
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, make_memory


def recall_event(memories, *, query: str, actor=None, spaces=("webshop",), at=None) -> RecallEvent:
    """A stored recall that returned `memories` in this order."""
    event = RecallEvent.objects.create(
        actor=actor, spaces=list(spaces), query_text=query, profile="sam",
        memory_ids=[m.pk for m in memories],
        items=[{"id": m.pk, "score": round(0.9 - 0.1 * rank, 4),
                "signals": {"semantic": round(0.8 - 0.1 * rank, 4), "exact": 0.5},
                "rationale": f"Recalled for {m.title.lower()}."} for rank, m in enumerate(memories)],
    )
    if at is not None:
        RecallEvent.objects.filter(pk=event.pk).update(created_at=at)
        event.refresh_from_db()
    return event


def between(earlier: AuditEvent, later: AuditEvent):
    return earlier.at + (later.at - earlier.at) / 2


def results(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def memory(space):
    return make_memory(space, title="Prefer pytest fixtures")


@pytest.fixture
def other(space):
    return make_memory(space, title="Use factory-boy factories",
                       content="Build test data with factory-boy factories, never with fixtures files.")


@pytest.fixture
def history(memory, other, user):
    """edit, then a recall returning `other` first and `memory` second, then archive."""
    edit = audit_record("edit", actor=user, target=memory,
                        before={"title": "Pytest fixtures", "tags": ["testing"]},
                        after={"title": "Prefer pytest fixtures", "tags": ["testing"]})
    audit_record("edit", actor=user, target=other, after={"title": "elsewhere"})
    archive = audit_record("archive", actor=user, target=memory, changes=[
        {"path": "archive_flag", "before": False, "after": True, "reason": "superseded"}])
    recall = recall_event([other, memory], query="how do we write tests?", actor=user,
                          at=between(edit, archive))
    return {"edit": edit, "archive": archive, "recall": recall}


def test_a_memory_timeline_shows_changes_and_why_it_was_recalled(api, memory, history):
    recorded_before = AuditEvent.objects.for_target("memory", memory.pk).count() - 2

    response = api.get(f"/api/v1/memories/{memory.pk}/timeline/")

    items = results(response)
    assert response.json()["count"] == recorded_before + 3
    assert [(i["kind"], i["event_id"]) for i in items[:3]] == [
        ("audit", history["archive"].pk), ("recall", history["recall"].pk), ("audit", history["edit"].pk),
    ]
    archive, recall, edit = items[:3]
    assert archive["action"] == "archive"
    assert archive["actor"] == "owner"
    assert archive["target"] == {"type": "memory", "id": memory.pk}
    assert archive["space"] == "webshop"
    assert archive["changes"] == [{"path": "archive_flag", "before": False, "after": True,
                                   "reason": "superseded"}]
    assert recall["action"] == "recall"
    assert recall["actor"] == "owner"
    assert recall["recall"]["query"] == "how do we write tests?"
    assert recall["recall"]["items"] == [{
        "memory_id": memory.pk, "rank": 2, "score": 0.8, "signals": {"semantic": 0.7, "exact": 0.5},
        "rationale": "Recalled for prefer pytest fixtures.",
    }]
    # No diff was recorded for the edit: the timeline works it out from before and after.
    assert edit["changes"] == [{"path": "title", "before": "Pytest fixtures",
                                "after": "Prefer pytest fixtures"}]
    assert edit["before"]["tags"] == ["testing"]


def test_the_audit_row_of_a_recall_is_not_shown_twice(api, memory, space, history):
    audit_record("recall", actor=SYSTEM, space=space, target=history["recall"],
                 after={"memory_ids": [memory.pk]})

    for url in (f"/api/v1/memories/{memory.pk}/timeline/", "/api/v1/spaces/webshop/timeline/"):
        recalls = [i for i in results(api.get(url)) if i["action"] == "recall"]
        assert [(i["kind"], i["event_id"]) for i in recalls] == [("recall", history["recall"].pk)]


def test_a_space_timeline_shows_its_events_and_only_its_memories_in_recalls(api, user, space, memory,
                                                                             history):
    ops = SpaceFactory(slug="ops", members={user: Role.OWNER})
    runbook = make_memory(ops, title="Restart the queue worker")
    audit_record("edit", actor=user, target=runbook, after={"title": "x"})
    across = recall_event([runbook, memory], query="testing and ops", spaces=("webshop", "ops"))
    recall_event([runbook], query="ops only", spaces=("webshop", "ops"))

    items = results(api.get("/api/v1/spaces/webshop/timeline/?page_size=500"))

    assert all(i["space"] == "webshop" for i in items if i["kind"] == "audit")
    assert {i["event_id"] for i in items if i["kind"] == "audit"} == set(
        AuditEvent.objects.filter(space_id=space.pk).exclude(action="recall").values_list("id", flat=True))
    recalls = {i["event_id"]: i["recall"] for i in items if i["kind"] == "recall"}
    assert set(recalls) == {across.pk, history["recall"].pk}
    assert [(r["memory_id"], r["rank"]) for r in recalls[across.pk]["items"]] == [(memory.pk, 2)]
    assert [r["memory_id"] for r in recalls[history["recall"].pk]["items"]] == [
        history["recall"].memory_ids[0], memory.pk]
    ats = [i["at"] for i in items]
    assert ats == sorted(ats, reverse=True)


def test_timelines_filter_by_action_and_time(api, memory, history):
    url = f"/api/v1/memories/{memory.pk}/timeline/"

    assert [i["event_id"] for i in results(api.get(url, {"action": "edit"}))] == [history["edit"].pk]
    assert [i["kind"] for i in results(api.get(url, {"action": "recall"}))] == ["recall"]
    assert [i["action"] for i in results(api.get(url, {"action": "edit,archive"}))] == ["archive", "edit"]
    window = {"after": history["edit"].at.isoformat(), "before": history["archive"].at.isoformat()}
    assert [i["kind"] for i in results(api.get(url, window))] == ["recall", "audit"]
    later = {"after": (history["archive"].at + timedelta(microseconds=1)).isoformat()}
    assert results(api.get(url, later)) == []


def test_bad_filters_get_field_errors(api, memory):
    url = f"/api/v1/memories/{memory.pk}/timeline/"
    response = api.get(url, {"action": "edit,tweak", "after": "yesterday"})
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"action", "after"}
    backwards = api.get(url, {"after": "2026-01-02T00:00:00Z", "before": "2026-01-01T00:00:00Z"})
    assert backwards.status_code == 400
    assert "before" in backwards.json()["error"]["fields"]


def test_timelines_are_paginated(api, memory, user):
    for n in range(5):
        audit_record("edit", actor=user, target=memory, after={"n": n})
    url = f"/api/v1/memories/{memory.pk}/timeline/"
    edits = AuditEvent.objects.for_target("memory", memory.pk).filter(action="edit").count()

    first = api.get(url, {"page_size": 2, "action": "edit"}).json()
    second = api.get(url, {"page_size": 2, "action": "edit", "page": 2}).json()

    assert first["count"] == second["count"] == edits
    assert first["next"] is not None
    assert first["previous"] is None
    assert [i["after"]["n"] for i in first["results"] + second["results"]] == [4, 3, 2, 1]


def test_a_page_costs_the_same_queries_however_many_items_it_holds(api, memory, user, history):
    def page() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as queries:
            items = results(api.get("/api/v1/spaces/webshop/timeline/?page_size=50"))
        return len(items), len(queries)

    page()  # warm up: the token's last use and the content-type cache are written once
    few_items, few_queries = page()
    for n in range(6):
        audit_record("edit", actor=user, target=memory, after={"n": n})
        recall_event([memory], query=f"query {n}", actor=user)
    many_items, many_queries = page()

    assert many_items == few_items + 12
    assert many_queries == few_queries


def test_unknown_memory_and_space_are_not_found(api, db, space):
    for url in ("/api/v1/memories/mem_nope/timeline/", "/api/v1/spaces/nope/timeline/"):
        response = api.get(url)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_an_anonymous_caller_must_authenticate(anon, memory):
    for url in (f"/api/v1/memories/{memory.pk}/timeline/", "/api/v1/spaces/webshop/timeline/"):
        response = anon.get(url)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "not_authenticated"


def test_a_stranger_cannot_tell_the_timelines_exist(persona, memory):
    stranger = persona(None)
    assert stranger.get(f"/api/v1/memories/{memory.pk}/timeline/").status_code == 404
    assert stranger.get("/api/v1/spaces/webshop/timeline/").status_code == 404


def test_a_viewer_may_read_but_not_audit(persona, memory):
    viewer = persona(Role.VIEWER)
    assert viewer.get(f"/api/v1/memories/{memory.pk}/").status_code == 200
    assert viewer.get(f"/api/v1/memories/{memory.pk}/timeline/").status_code == 403
    assert viewer.get("/api/v1/spaces/webshop/timeline/").status_code == 403


def test_an_auditor_does_not_see_the_history_of_memories_hidden_from_them(api, persona, memory, other,
                                                                          history):
    memory_restrict(actor=SYSTEM, memory_id=memory.pk, min_role=Role.CURATOR, reason="personal")
    auditor = persona(Role.AUDITOR)

    seen = results(auditor.get("/api/v1/spaces/webshop/timeline/?page_size=500"))

    assert not [i for i in seen if i["target"] == {"type": "memory", "id": memory.pk}]
    recall = next(i for i in seen if i["event_id"] == history["recall"].pk and i["kind"] == "recall")
    assert [r["memory_id"] for r in recall["recall"]["items"]] == [other.pk]
    assert auditor.get(f"/api/v1/memories/{memory.pk}/timeline/").status_code == 404
    owner_view = results(api.get("/api/v1/spaces/webshop/timeline/?page_size=500"))
    assert [i for i in owner_view if i["target"] == {"type": "memory", "id": memory.pk}]


def test_a_tracked_recall_shows_on_the_timeline_with_the_same_rationale(api, space, on_commit):
    with on_commit():
        memory = make_memory(space, title="Dana is vegetarian", tags=["food", "diet"],
                             content="Dana is vegetarian and does not eat fish; suggest vegetarian recipes.")
    answer = api.post("/api/v1/recall/", {"query": "what can Dana eat? she avoids meat",
                                          "spaces": ["webshop"], "track": True}, format="json")
    assert answer.status_code == 200, answer.content
    top = answer.json()["data"]["ranked_memory_list"][0]
    assert top["id"] == memory.pk

    items = results(api.get(f"/api/v1/memories/{memory.pk}/timeline/", {"action": "recall"}))

    assert len(items) == 1
    why = items[0]["recall"]["items"][0]
    assert (why["rank"], why["rationale"]) == (1, top["rationale"])
    assert why["signals"] == pytest.approx(top["signals"], abs=1e-4)
    assert items[0]["recall"]["query"].startswith("what can Dana eat?")
