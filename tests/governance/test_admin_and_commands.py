"""Governance in the admin (members through the services, audited) and the key commands."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from guardian.shortcuts import get_perms

from governance.audit.models import AuditEvent
from governance.models import DataKey, DataKeyState, SpaceMembership
from tests.factories import SpaceFactory, UserFactory, make_memory


@pytest.fixture
def boss_client(db, client):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


def _space_form(space, **inline) -> dict:
    data = {
        "name": space.name, "kind": space.kind, "description": "", "mode": "assist",
        "retention_days": "", "redaction_allowlist": "", "duplicate_policy": "reinforce",
        "near_duplicate_policy": "review", "supersession_policy": "auto", "capture_sources": "",
        "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
        "restricted_tags-TOTAL_FORMS": "0", "restricted_tags-INITIAL_FORMS": "0",
    }
    data.update(inline)
    return data


def test_a_role_granted_in_the_admin_becomes_guardian_permissions_and_is_audited(boss_client):
    space = SpaceFactory(slug="admin-space")
    ana = UserFactory(username="ana")
    url = reverse("admin:core_space_change", args=[space.pk])

    response = boss_client.post(url, _space_form(space, **{
        "memberships-TOTAL_FORMS": "1", "memberships-0-user": ana.pk, "memberships-0-role": "viewer",
        "restricted_tags-TOTAL_FORMS": "1", "restricted_tags-0-tag": "salary",
        "restricted_tags-0-min_role": "curator",
    }))

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert SpaceMembership.objects.get(space=space, user=ana).role == "viewer"
    assert get_perms(ana, space) == ["space_read"]
    grants = AuditEvent.objects.filter(action="grant", space_slug="admin-space")
    assert grants.count() == 2  # the role and the restricted tag


def test_deleting_a_space_in_the_admin_shreds_its_keys(boss_client):
    space = SpaceFactory(slug="doomed")
    make_memory(space)
    url = reverse("admin:core_space_delete", args=[space.pk])
    assert boss_client.post(url, {"post": "yes"}).status_code == 302
    assert not DataKey.objects.filter(space_id=space.pk).exists()
    assert AuditEvent.objects.filter(action="delete", target_type="space").exists()


def test_sam_keys_rotate_and_reencrypt_from_the_command_line(space):
    make_memory(space)
    out = StringIO()
    call_command("sam_keys", "rotate", "--space", "webshop", stdout=out)
    call_command("sam_keys", "reencrypt", stdout=out)
    call_command("sam_keys", "status", stdout=out)
    text = out.getvalue()
    assert "new data key" in text
    assert "memories.Memory: 1 rows re-encrypted" in text
    assert DataKey.objects.filter(space=space, state=DataKeyState.ACTIVE).count() == 1


def test_sam_token_makes_a_scoped_service_account(space, capsys):
    other = SpaceFactory(slug="elsewhere")
    call_command("sam_token", "--user", "ci-agent", "--create-user", "--space", "webshop",
                 "--role", "viewer")
    raw = capsys.readouterr().out.strip()
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/spaces/webshop/").status_code == 200
    assert client.get(f"/api/v1/spaces/{other.slug}/").status_code == 404
    denied = client.post("/api/v1/memories/", {"space": "webshop", "title": "Nope",
                                               "content": "A viewer token cannot write."}, format="json")
    assert denied.status_code == 403
