"""API token authentication: hashed at rest, expiring, revocable, last use recorded."""

from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import ApiToken, hash_token
from governance.services import api_token_issue, api_token_revoke
from tests.factories import UserFactory


def client_with(raw: str, keyword: str = "Bearer") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} {raw}")
    return client


def test_only_the_hash_of_a_token_is_stored(db):
    token, raw = api_token_issue(user=UserFactory(), name="laptop")
    assert raw.startswith("sam_")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_hash == hash_token(raw)
    assert raw not in {stored.key_hash, stored.prefix, stored.name}


def test_a_valid_token_authenticates_and_records_last_use(db):
    token, raw = api_token_issue(user=UserFactory(), name="agent")
    assert client_with(raw).get("/api/v1/memories/").status_code == 200
    assert client_with(raw, "Token").get("/api/v1/memories/").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at is not None


def test_revoked_expired_and_unknown_tokens_are_401(db):
    user = UserFactory()
    revoked, raw_revoked = api_token_issue(user=user, name="old")
    api_token_revoke(token=revoked)
    past = timezone.now() - timedelta(seconds=1)
    _, raw_expired = api_token_issue(user=user, name="short", expires_at=past)

    for raw in (raw_revoked, raw_expired, "sam_not_a_real_token"):
        response = client_with(raw).get("/api/v1/memories/")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "not_authenticated"


def test_tokens_of_inactive_users_stop_working(db):
    user = UserFactory()
    _, raw = api_token_issue(user=user, name="agent")
    user.is_active = False
    user.save()
    assert client_with(raw).get("/api/v1/memories/").status_code == 401


def test_the_command_prints_a_working_token(db, capsys):
    call_command("sam_token", "--user", "agent-ci", "--create-user", "--expires-days", "30")
    raw = capsys.readouterr().out.strip()
    assert client_with(raw).get("/api/v1/spaces/").status_code == 200
    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert 29 <= (token.expires_at - timezone.now()).days <= 30
