"""Token scope: an emptied scope means no space, scoped tokens do not create spaces, and
every change to a token is audited."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from core.models import Space
from governance import retention
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.models import ApiToken, hash_token
from governance.services import api_token_issue
from tests.factories import SpaceFactory, UserFactory, make_memory


def bearer(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def owner(db):
    return UserFactory(username="scope-owner")


def test_a_token_whose_only_space_was_deleted_sees_no_space(owner):
    """Given a token scoped to one space of a user who owns two, when that space is deleted,
    then the token sees no space and no memory, rather than all of its user's."""
    kept = SpaceFactory(slug="scope-kept", members={owner: "owner"})
    doomed = SpaceFactory(slug="scope-doomed", members={owner: "owner"})
    secret = make_memory(kept, title="Kept space secret")
    _, raw = api_token_issue(user=owner, name="scoped", spaces=[doomed])
    client = bearer(raw)

    retention.space_delete(actor=SYSTEM, slug=doomed.slug)

    assert client.get("/api/v1/spaces/").json()["results"] == []
    assert client.get("/api/v1/memories/").json()["results"] == []
    assert client.get(f"/api/v1/memories/{secret.pk}/").status_code == 404
    recall = client.post("/api/v1/recall/", {"query_type": "recent", "track": False}, format="json")
    assert recall.json()["data"]["ranked_memory_list"] == []


def test_a_token_issued_without_spaces_works_in_spaces_made_later(owner):
    """Given a token issued with no spaces, when its user gains a space, then it works there."""
    _, raw = api_token_issue(user=owner, name="everywhere")
    assert ApiToken.objects.get(key_hash=hash_token(raw)).all_spaces is True
    SpaceFactory(slug="scope-later", members={owner: "viewer"})

    assert [s["slug"] for s in bearer(raw).get("/api/v1/spaces/").json()["results"]] == ["scope-later"]


@pytest.mark.parametrize(("scope", "status"), [
    ({}, 201),
    ({"role": "owner"}, 201),
    ({"role": "curator"}, 403),
    ({"role": "viewer"}, 403),
    ({"spaces": "own"}, 403),
])
def test_only_an_unnarrowed_token_creates_spaces(owner, scope, status):
    """Given a token narrowed (or not) to spaces or a role, when it creates a space, then
    only a token that works in every space at up to owner's rights may."""
    own = SpaceFactory(slug="scope-own", members={owner: "owner"})
    if scope.get("spaces"):
        scope = {"spaces": [own]}
    _, raw = api_token_issue(user=owner, name="creator", **scope)

    response = bearer(raw).post("/api/v1/spaces/", {"slug": "scope-new", "name": "New"}, format="json")

    assert response.status_code == status, response.content
    assert Space.objects.filter(slug="scope-new").exists() is (status == 201)
    if status == 403:
        assert response.json()["error"]["code"] == "forbidden"


def test_sam_token_marks_whether_the_token_is_limited_to_named_spaces(db, capsys):
    """Given the command, when it issues a token with and without --space, then the token
    records which it is."""
    SpaceFactory(slug="scope-cli")
    call_command("sam_token", "--user", "cli-scoped", "--create-user", "--space", "scope-cli")
    scoped = ApiToken.objects.get(key_hash=hash_token(capsys.readouterr().out.strip()))
    call_command("sam_token", "--user", "cli-scoped")
    unscoped = ApiToken.objects.get(key_hash=hash_token(capsys.readouterr().out.strip()))

    assert (scoped.all_spaces, [s.slug for s in scoped.spaces.all()]) == (False, ["scope-cli"])
    assert (unscoped.all_spaces, list(unscoped.spaces.all())) == (True, [])


def test_the_migration_keeps_tokens_without_spaces_working_everywhere(owner):
    """Given tokens as they were before the flag (none set), when the migration step runs,
    then tokens naming no space work everywhere and scoped ones stay scoped."""
    from importlib import import_module

    step = import_module("governance.migrations.0004_token_scope_flag_and_memory_grants")
    space = SpaceFactory(slug="scope-migrated", members={owner: "owner"})
    plain, _ = api_token_issue(user=owner, name="plain")
    scoped, _ = api_token_issue(user=owner, name="scoped", spaces=[space])
    ApiToken.objects.update(all_spaces=False)

    step.scope_existing_tokens(django_apps, None)

    assert ApiToken.objects.get(pk=plain.pk).all_spaces is True
    assert ApiToken.objects.get(pk=scoped.pk).all_spaces is False


def test_changing_a_tokens_expiry_in_the_admin_is_audited(owner, client):
    """Given a token, when a superuser changes its expiry in the admin, then the change is
    saved and audited with before and after."""
    token, _ = api_token_issue(user=owner, name="laptop")
    client.force_login(UserFactory(username="token-boss", is_staff=True, is_superuser=True))
    expires = (timezone.now() + timedelta(days=3)).replace(microsecond=0, second=0)

    response = client.post(reverse("admin:governance_apitoken_change", args=[token.pk]), {
        "expires_at_0": timezone.localtime(expires).strftime("%Y-%m-%d"),
        "expires_at_1": timezone.localtime(expires).strftime("%H:%M:%S"),
    })

    assert response.status_code == 302, response.content[:500]
    assert ApiToken.objects.get(pk=token.pk).expires_at == expires
    event = AuditEvent.objects.get(action="edit", target_type="apitoken", target_id=str(token.pk))
    assert event.actor_label == "token-boss"
    assert event.payload_data == {"before": {"expires_at": None},
                                  "after": {"expires_at": expires.isoformat()}}
