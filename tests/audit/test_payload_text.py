"""Memory events record what happened, never the text: forgetting a memory forgets its words.

The audit log is append-only, so whatever text it held would outlive retention and hard
deletes. Memory events keep labels and keyed fingerprints; the timeline shows real diffs
from the memory's own versions while the memory exists (docs/audit.md, "Memory events").
"""

from __future__ import annotations

import json
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.retention import retention_enforce
from governance.services import api_token_issue
from memories.models import Memory
from tests.factories import SpaceFactory, UserFactory

CREATED = {"title": "Zanzibarquokka deploy rule",
           "content": "Always run the xylophonewombat migration before the backfill.",
           "tags": ["marmaladeplatypus"]}
EDITED = "Use the obsidianferret flag from now on."
EDIT_REASON = "glacierkoala asked for it"
ARCHIVE_REASON = "replaced by the nebulaotter runbook"
CANARIES = ("zanzibarquokka", "xylophonewombat", "marmaladeplatypus", "obsidianferret",
            "glacierkoala", "nebulaotter")


def opened_payloads() -> str:
    """Every audit payload there is, opened with the cipher, as one lower-case text."""
    return json.dumps([event.payload_data for event in AuditEvent.objects.order_by("id")]).lower()


def assert_no_canary(text: str) -> None:
    for canary in CANARIES:
        assert canary not in text, f"{canary} is readable"


def written(api: APIClient, space_slug: str = "webshop") -> str:
    """Create, edit and archive a memory through the API; returns its id."""
    created = api.post("/api/v1/memories/", {"space": space_slug, **CREATED}, format="json")
    assert created.status_code == 201, created.content
    memory_id = created.json()["memory"]["id"]
    edited = api.patch(f"/api/v1/memories/{memory_id}/",
                       {"version": 1, "content": EDITED, "reason": EDIT_REASON}, format="json")
    assert edited.status_code == 200, edited.content
    archived = api.post(f"/api/v1/memories/{memory_id}/archive/", {"reason": ARCHIVE_REASON},
                        format="json")
    assert archived.status_code == 200, archived.content
    return memory_id


def memory_items(api: APIClient, memory_id: str) -> list[dict]:
    response = api.get("/api/v1/spaces/webshop/timeline/?page_size=500")
    assert response.status_code == 200, response.content
    return [i for i in response.json()["results"] if i["target"] == {"type": "memory", "id": memory_id}]


def test_a_hard_deleted_memory_leaves_no_text_in_the_audit_log(api, space):
    memory_id = written(api)

    assert api.delete(f"/api/v1/memories/{memory_id}/").status_code == 204

    assert not Memory.objects.filter(pk=memory_id).exists()
    assert_no_canary(opened_payloads())
    call_command("sam_audit_verify")
    items = memory_items(api, memory_id)
    assert [i["action"] for i in items] == ["delete", "archive", "edit", "create"]
    assert_no_canary(json.dumps(items).lower())
    # What happened is still there: which fields changed, and fingerprints of the values.
    edit = items[2]
    assert [c["path"] for c in edit["changes"]] == ["content"]
    change = edit["changes"][0]
    assert change["before"]["length"] == len(CREATED["content"])
    assert change["after"]["length"] == len(EDITED)
    assert change["before"]["digest"] != change["after"]["digest"]
    assert (edit["before"], edit["after"]) == ({"version": 1}, {"version": 2})
    assert edit["note"] == ""
    archive = items[1]
    assert archive["changes"] == [{"path": "archive_flag", "before": False, "after": True}]
    assert items[0]["before"] == {"version": 2, "kind": "fact"}


def test_a_memory_purged_by_retention_leaves_no_text_in_the_audit_log(api, space):
    space_services.space_update(actor=SYSTEM, slug="webshop", changes={"retention_days": 7})
    memory_id = written(api)
    Memory.objects.filter(pk=memory_id).update(updated_at=timezone.now() - timedelta(days=8))

    assert retention_enforce()["webshop"]["memories"] == 1

    assert not Memory.objects.filter(pk=memory_id).exists()
    assert_no_canary(opened_payloads())
    call_command("sam_audit_verify")
    assert [i["action"] for i in memory_items(api, memory_id)] == ["archive", "edit", "create"]
    assert_no_canary(json.dumps(memory_items(api, memory_id)).lower())
    purge = AuditEvent.objects.get(action="retention_purge")
    assert purge.payload_data["after"]["deleted"]["memories"] == 1


def test_while_the_memory_exists_its_timeline_shows_the_real_diffs(api, space):
    memory_id = written(api)

    response = api.get(f"/api/v1/memories/{memory_id}/timeline/")

    assert response.status_code == 200, response.content
    archive, edit, create = response.json()["results"]
    assert edit["changes"] == [{"path": "content", "before": CREATED["content"], "after": EDITED,
                                "reason": EDIT_REASON}]
    assert edit["note"] == EDIT_REASON
    assert create["after"]["title"] == CREATED["title"]
    assert create["after"]["tags"] == CREATED["tags"]
    assert {"path": "content", "before": None, "after": CREATED["content"]} in create["changes"]
    # The archive reason is the memory's current one, and its fingerprint matches it.
    assert archive["changes"] == [{"path": "archive_flag", "before": False, "after": True,
                                   "reason": ARCHIVE_REASON}]
    assert archive["note"] == ARCHIVE_REASON
    # ...while the log itself holds none of it.
    assert_no_canary(opened_payloads())


def test_fingerprints_of_equal_values_are_equal(api, space):
    created = api.post("/api/v1/memories/", {"space": "webshop", **CREATED}, format="json").json()["memory"]
    for version, title in ((1, "Quarterly release rule"), (2, CREATED["title"])):
        response = api.patch(f"/api/v1/memories/{created['id']}/", {"version": version, "title": title},
                             format="json")
        assert response.status_code == 200, response.content

    first, back = (e.payload_data["changes"][0] for e in
                   AuditEvent.objects.filter(action="edit", target_id=created["id"]).order_by("id"))

    assert first["path"] == back["path"] == "title"
    assert first["before"] == back["after"]
    assert first["after"] == back["before"]
    assert first["before"]["digest"] != first["after"]["digest"]


def test_labels_stay_readable(api, space):
    created = api.post("/api/v1/memories/", {"space": "webshop", **CREATED, "kind": "procedure",
                                             "reliability": "confirmed"}, format="json").json()["memory"]

    payload = AuditEvent.objects.get(action="create", target_id=created["id"]).payload_data

    assert payload["digests"] is True
    after = payload["after"]
    assert (after["version"], after["kind"], after["reliability"]) == (1, "procedure", "confirmed")
    assert set(after["title"]) == {"digest", "length"}
    assert set(after["tags"]) == {"digest", "length"}
    assert after["tags"]["length"] == 1


def test_a_database_dump_holds_no_text_of_a_deleted_memory(transactional_db):
    from tests.governance.test_encryption import _pg_dump

    owner = UserFactory(username="owner")
    SpaceFactory(slug="webshop", members={owner: "owner"})
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_issue(user=owner, name='t')[1]}")
    memory_id = written(api)
    assert api.delete(f"/api/v1/memories/{memory_id}/").status_code == 204

    dump = _pg_dump().lower()

    assert memory_id.lower() in dump  # the audit rows name it...
    assert_no_canary(dump)  # ...but nothing says what it said
    assert_no_canary(opened_payloads())
