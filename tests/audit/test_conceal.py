"""A deleted memory can no longer say who may see it, so what its audit events recorded
(the payload) is shown only to the space's owners; other auditors see that it happened."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.roles import Role
from governance.services import membership_grant
from tests.factories import UserFactory

TIMELINE = "/api/v1/spaces/webshop/timeline/?page_size=500"


def write(api, title: str) -> str:
    created = api.post("/api/v1/memories/", {"space": "webshop", "title": title, "tags": ["ops"],
                                             "content": f"{title}: keep the runbook next to the alert."},
                       format="json")
    assert created.status_code == 201, created.content
    memory_id = created.json()["memory"]["id"]
    edited = api.patch(f"/api/v1/memories/{memory_id}/", {"version": 1, "content": f"{title}: page twice."},
                       format="json")
    assert edited.status_code == 200, edited.content
    return memory_id


@pytest.fixture
def deleted_and_kept(api, space) -> tuple[str, str]:
    """Two memories written and edited by the owner (`api`); the first then deleted."""
    deleted, kept = write(api, "Rotate the pager key"), write(api, "Escalate after ten minutes")
    assert api.delete(f"/api/v1/memories/{deleted}/").status_code == 204
    return deleted, kept


def payloads(client, memory_id: str) -> dict[str, list]:
    """action -> [before, after, changes] of each timeline item about `memory_id`."""
    response = client.get(TIMELINE)
    assert response.status_code == 200, response.content
    found: dict[str, list] = {}
    for item in response.json()["results"]:
        if item["kind"] == "audit" and item["target"] == {"type": "memory", "id": memory_id}:
            found[item["action"]] = [item["before"], item["after"], item["changes"]]
    return found


def is_empty(parts: list) -> bool:
    return not any(parts)


@pytest.mark.parametrize("role", [Role.CURATOR, Role.AUDITOR])
def test_an_auditor_below_owner_sees_a_deleted_memorys_events_without_their_payloads(
        persona, deleted_and_kept, role):
    deleted, kept = deleted_and_kept
    reader = persona(role)

    seen = payloads(reader, deleted)

    # That it happened stays: every event is listed...
    assert {"create", "edit", "delete"} <= set(seen)
    # ...but not what it recorded.
    assert all(is_empty(parts) for parts in seen.values()), seen
    # A memory that still exists says who may see it: its payloads are shown.
    assert not is_empty(payloads(reader, kept)["edit"])


def test_the_owner_still_reads_a_deleted_memorys_payloads(api, deleted_and_kept):
    deleted, _ = deleted_and_kept

    seen = payloads(api, deleted)

    assert {"create", "edit", "delete"} <= set(seen)
    assert not is_empty(seen["edit"])
    assert [change["path"] for change in seen["edit"][2]] == ["content"]


def staff_client(user) -> Client:
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(Permission.objects.get(codename="view_auditevent"))
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_hides_a_deleted_memorys_payload_from_a_curator_not_from_the_owner(
        user, space, deleted_and_kept):
    deleted, kept = deleted_and_kept
    curator = UserFactory(username="staff-curator")
    membership_grant(actor=SYSTEM, space=space, user=curator, role=Role.CURATOR)
    edit_of = {memory_id: AuditEvent.objects.get(target_type="memory", target_id=memory_id, action="edit")
               for memory_id in (deleted, kept)}

    def page(client: Client, memory_id: str) -> str:
        response = client.get(reverse("admin:audit_auditevent_change", args=[edit_of[memory_id].pk]))
        assert response.status_code == 200
        return response.text

    as_curator, as_owner = staff_client(curator), staff_client(user)

    assert "(hidden: the memory is deleted" in page(as_curator, deleted)
    assert "&quot;changes&quot;" not in page(as_curator, deleted)
    assert "&quot;changes&quot;" in page(as_curator, kept)
    assert "&quot;changes&quot;" in page(as_owner, deleted)
