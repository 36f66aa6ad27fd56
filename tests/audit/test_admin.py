"""The audit log in the admin: readable, never editable, with a chain check."""

from __future__ import annotations

from django.urls import reverse

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.audit.services import audit_record


def test_the_list_shows_events_and_filters_by_action(admin_client, chain):
    audit_record("archive", actor=SYSTEM, target_type="memory", target_id="mem_archived")
    url = reverse("admin:audit_auditevent_changelist")

    everything = admin_client.get(url)
    archives = admin_client.get(url, {"action__exact": "archive"})

    assert everything.status_code == 200
    assert "mem_4" in everything.text
    assert "mem_archived" in everything.text
    assert "mem_archived" in archives.text
    assert "mem_4" not in archives.text
    assert "Verify chain" in everything.text


def test_search_finds_a_request_by_its_id(admin_client, db):
    audit_record("edit", actor=SYSTEM, target_id="mem_traced", request_id="trace-9")
    audit_record("edit", actor=SYSTEM, target_id="mem_other", request_id="trace-10")

    found = admin_client.get(reverse("admin:audit_auditevent_changelist"), {"q": "trace-9"})

    assert "mem_traced" in found.text
    assert "mem_other" not in found.text


def test_an_event_page_shows_the_payload_readably_and_cannot_be_saved(admin_client, chain):
    event = chain[2]
    url = reverse("admin:audit_auditevent_change", args=[event.pk])

    page = admin_client.get(url)
    posted = admin_client.post(url, {"actor_label": "mallory"})

    assert page.status_code == 200
    assert "<pre" in page.text
    assert "&quot;before&quot;: {" in page.text
    assert 'name="_save"' not in page.text
    assert posted.status_code == 403
    assert AuditEvent.objects.get(pk=event.pk).actor_label == "system"


def test_events_cannot_be_added_or_deleted_in_the_admin(admin_client, chain):
    add = admin_client.get(reverse("admin:audit_auditevent_add"))
    delete = admin_client.post(reverse("admin:audit_auditevent_delete", args=[chain[0].pk]), {"post": "yes"})
    bulk = admin_client.post(reverse("admin:audit_auditevent_changelist"),
                             {"action": "delete_selected", "_selected_action": [chain[0].pk]})

    assert add.status_code == 403
    assert delete.status_code == 403
    assert bulk.status_code in (200, 302)
    assert AuditEvent.objects.count() == 5


def test_the_verify_page_reports_an_intact_chain_and_its_head(admin_client, chain):
    page = admin_client.get(reverse("admin:audit_auditevent_verify"))
    assert page.status_code == 200
    assert "Audit chain intact:</strong> 5 events" in page.text
    assert chain[-1].hash in page.text


def test_the_verify_page_names_the_first_broken_link(admin_client, chain, tamper):
    tamper("DELETE FROM audit_auditevent WHERE id = %s", [chain[1].pk])

    page = admin_client.get(reverse("admin:audit_auditevent_verify"))

    assert "Audit chain broken" in page.text
    assert f"event {chain[2].pk} links to {chain[1].hash}" in page.text


def test_the_verify_page_checks_a_published_head(admin_client, chain):
    page = admin_client.get(reverse("admin:audit_auditevent_verify"), {"expect_head": "f" * 64})
    assert "Audit chain broken" in page.text
    assert "is not in the chain" in page.text


def test_the_verify_page_needs_admin_access(client, chain):
    page = client.get(reverse("admin:audit_auditevent_verify"))
    assert page.status_code == 302
    assert "/login/" in page["Location"]
