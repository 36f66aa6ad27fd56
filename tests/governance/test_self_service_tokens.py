"""Self-service API tokens: a person issues, lists and revokes their own, through REST and the
admin; never wider than themselves (or than the token they call with); every step audited.
Token scopes: a read-only token reads and recalls, and is refused every write."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from governance import tokens
from governance.audit.models import AuditEvent
from governance.models import ApiToken, hash_token
from governance.scopes import SAFE_METHODS
from samsite.mcp.dispatch import Caller
from samsite.mcp.server import build_server
from tests.factories import SpaceFactory, UserFactory
from tests.governance.test_role_matrix import api_operations, tool_answer
from tests.governance.test_role_matrix import tools_on_the_test_thread as tools_on_the_test_thread
from tests.personas import bearer, client_for, client_with

MINE = "/api/v1/me/tokens/"


@pytest.fixture
def alice(db):
    """Owner of `alpha`, viewer of `beta`; `gamma` exists, and is none of hers."""
    user = UserFactory(username="tok-alice")
    SpaceFactory(slug="alpha", members={user: "owner"})
    SpaceFactory(slug="beta", members={user: "viewer"})
    SpaceFactory(slug="gamma")
    return user


def issue(client: APIClient, **body) -> dict:
    response = client.post(MINE, {"name": "agent", **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_person_issues_lists_and_revokes_a_token_and_each_step_is_audited(alice):
    """Given alice signed in, when she issues a token, lists it, uses it and revokes it, then the
    secret shows once, her list shows its last use, and it stops working once revoked."""
    client = client_for(alice)

    made = issue(client, name="laptop", spaces=["alpha"], role="contributor", scopes=["read", "write"])

    secret = made.pop("secret")
    assert secret.startswith("sam_")
    assert made["prefix"] == secret[:10]
    assert made["spaces"] == ["alpha"]
    assert made["role"] == "contributor"
    assert made["usable"] is True
    assert "key_hash" not in made
    assert secret not in str(client.get(MINE).json())
    assert client_with(f"Bearer {secret}").get("/api/v1/spaces/").status_code == 200
    listed = client.get(MINE).json()
    assert set(listed) == {"count", "next", "previous", "results"}
    shown = next(t for t in listed["results"] if t["id"] == made["id"])
    assert shown["last_used_at"] is not None
    assert "secret" not in shown
    assert client.get(f"{MINE}{made['id']}/").json()["name"] == "laptop"

    assert client.delete(f"{MINE}{made['id']}/").status_code == 204
    assert client.delete(f"{MINE}{made['id']}/").status_code == 204  # again: still 204

    assert client_with(f"Bearer {secret}").get("/api/v1/spaces/").status_code == 401
    assert client.get(f"{MINE}{made['id']}/").json()["usable"] is False
    events = AuditEvent.objects.for_target("apitoken", str(made["id"]))
    assert sorted(e.action for e in events) == ["token_issue", "token_revoke"]  # one revoke only
    assert {e.actor_id for e in events} == {alice.pk}
    assert events.get(action="token_issue").payload_data["after"]["scopes"] == ["read", "write"]


def test_spaces_left_out_mean_all_of_mine_and_the_token_follows_new_ones(alice):
    made = issue(client_for(alice))
    assert made["spaces"] is None
    assert made["role"] == ""
    assert made["scopes"] == ["read", "write"]
    SpaceFactory(slug="delta", members={alice: "viewer"})
    listed = client_with(f"Bearer {made['secret']}").get("/api/v1/spaces/").json()["results"]
    slugs = {s["slug"] for s in listed}
    assert slugs == {"alpha", "beta", "delta"}


def test_another_persons_token_is_not_found_to_read_or_revoke(alice):
    bob = UserFactory(username="tok-bob")
    bobs, _ = tokens.api_token_issue(user=bob, name="bob's")
    client = client_for(alice)

    others = client.get(f"{MINE}{bobs.pk}/")
    missing = client.get(f"{MINE}{bobs.pk + 10_000}/")
    assert others.status_code == missing.status_code == 404
    assert others.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"
    assert client.delete(f"{MINE}{bobs.pk}/").status_code == 404
    assert ApiToken.objects.get(pk=bobs.pk).revoked_at is None
    assert bobs.pk not in [t["id"] for t in client.get(MINE).json()["results"]]
    assert APIClient().get(MINE).status_code == 401


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"spaces": ["beta"], "role": "contributor"}, 403, "role"),       # viewer there
    ({"spaces": ["alpha", "beta"], "role": "curator"}, 403, "role"),  # above her in one of them
    ({"spaces": ["beta"], "role": "auditor"}, 403, "role"),           # same rank, one right more
    ({"expires_at": "2001-01-01T00:00:00Z"}, 400, "expires_at"),
    ({"scopes": ["write"]}, 400, "scopes"),
    ({"scopes": ["admin"]}, 400, "scopes"),
    ({"spaces": []}, 400, "spaces"),
    ({"name": "  "}, 400, "name"),
])
def test_bad_requests_are_refused_with_the_field_named(alice, body, status, field):
    response = client_for(alice).post(MINE, {"name": "agent", **body}, format="json")
    assert response.status_code == status, response.content
    assert any(name.startswith(field) for name in response.json()["error"]["fields"])
    assert not ApiToken.objects.filter(user=alice, name="agent").exists()


def test_a_role_of_her_own_is_allowed_in_each_space_and_anywhere_she_holds_it(alice):
    assert issue(client_for(alice), spaces=["beta"], role="viewer")["role"] == "viewer"
    assert issue(client_for(alice), role="owner")["spaces"] is None  # she owns alpha
    viewer_only = UserFactory(username="tok-viewer")
    SpaceFactory(slug="beta", members={viewer_only: "viewer"})
    refused = client_for(viewer_only).post(MINE, {"name": "x", "role": "curator"}, format="json")
    assert refused.status_code == 403


def test_a_space_she_cannot_see_answers_exactly_as_one_that_does_not_exist(alice):
    client = client_for(alice)
    unseen = client.post(MINE, {"name": "agent", "spaces": ["gamma"], "role": "owner"}, format="json")
    missing = client.post(MINE, {"name": "agent", "spaces": ["no-such"], "role": "owner"}, format="json")

    assert unseen.status_code == missing.status_code == 400
    assert unseen.json()["error"]["fields"]["spaces"] == ["No space 'gamma' that you can see."]
    assert missing.json()["error"]["fields"]["spaces"] == ["No space 'no-such' that you can see."]
    assert unseen.json()["error"]["message"] == missing.json()["error"]["message"]


def test_a_token_issues_only_tokens_no_wider_than_itself(alice):
    """Given an agent token of alice scoped to alpha, capped at contributor and expiring in a
    day, when it issues tokens, then what it leaves out is inherited and anything wider is
    refused: another space of hers is as unknown to it as a missing one."""
    in_a_day = timezone.now() + timedelta(days=1)
    parent, raw = tokens.api_token_issue(user=alice, name="agent", spaces=[alice.space_memberships.get(
        space__slug="alpha").space], role="contributor", expires_at=in_a_day)
    agent = client_with(f"Bearer {raw}")

    child = issue(agent, name="child")
    assert child["spaces"] == ["alpha"]
    assert child["role"] == "contributor"
    assert child["expires_at"] == in_a_day.isoformat().replace("+00:00", "Z")
    assert issue(agent, name="viewer child", role="viewer", scopes=["read"])["scopes"] == ["read"]

    assert agent.post(MINE, {"name": "up", "role": "owner"}, format="json").status_code == 403
    assert agent.post(MINE, {"name": "up", "role": "auditor"}, format="json").status_code == 403
    wider_space = agent.post(MINE, {"name": "up", "spaces": ["beta"]}, format="json")
    assert wider_space.status_code == 400
    assert wider_space.json()["error"]["fields"]["spaces"] == ["No space 'beta' that you can see."]
    later = (in_a_day + timedelta(days=30)).isoformat()
    assert agent.post(MINE, {"name": "up", "expires_at": later}, format="json").status_code == 403
    # Her all-spaces token is not the agent's to list, read or revoke.
    everywhere, _ = tokens.api_token_issue(user=alice, name="everywhere")
    assert everywhere.pk not in [t["id"] for t in agent.get(MINE).json()["results"]]
    assert agent.delete(f"{MINE}{everywhere.pk}/").status_code == 404
    issued = AuditEvent.objects.for_target("apitoken", str(child["id"])).get()
    assert issued.payload_data["note"] == f"issued through token {parent.prefix}…"


def test_a_read_only_token_reads_and_recalls_but_writes_nothing(alice):
    """Given a read-only token, then reads and recall answer, and every write is 403
    insufficient_scope: a memory, a token, a revoke (its own included)."""
    made = issue(client_for(alice), scopes=["read"])
    reader = client_with(f"Bearer {made['secret']}")

    assert reader.get("/api/v1/memories/").status_code == 200
    assert reader.get(MINE).status_code == 200
    recall = reader.post("/api/v1/recall/", {"query_type": "recent", "track": False}, format="json")
    assert recall.status_code == 200, recall.content
    for method, url, body in (
        ("post", "/api/v1/memories/", {"space": "alpha", "title": "No", "content": "A write it may not do."}),
        ("post", MINE, {"name": "child"}),
        ("delete", f"{MINE}{made['id']}/", None),
        ("put", "/api/v1/me/mode/", {"mode": "off"}),
    ):
        response = getattr(reader, method)(url, body, format="json")
        assert response.status_code == 403, (url, response.content)
        assert response.json()["error"]["code"] == "insufficient_scope"
    assert ApiToken.objects.filter(user=alice).count() == 2  # hers, and the read-only one
    assert ApiToken.objects.get(pk=made["id"]).revoked_at is None


def _url(route: str) -> str:
    """A URL of `route` (as the schema writes it) with a value in each parameter."""
    values = {"slug": "alpha", "kind": "user"}
    for name in re.findall(r"{(\w+)}", route):
        route = route.replace("{" + name + "}", values.get(name, "1"))
    return route


def test_every_write_route_refuses_a_read_only_token(alice):
    """Every unsafe method of every /api/v1/ route, but the few that only read (recall, packs,
    prompt augmentation, chain recall, `used`), is refused to a read-only token, before its
    view looks at anything (the parameters here name nothing)."""
    _, raw = tokens.api_token_issue(user=alice, name="reader", scopes=["read"])
    reader = client_with(f"Bearer {raw}")
    let_through = set()
    for method, route in sorted(api_operations()):
        if method.upper() in SAFE_METHODS or method == "ANY":
            continue
        response = getattr(reader, method.lower())(_url(route), {}, format="json")
        refused = response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
        if not refused:
            let_through.add((method, route))
    assert let_through == {
        ("POST", "/api/v1/recall/"), ("POST", "/api/v1/context-packs/"),
        ("POST", "/api/v1/prompt-augmentation/"), ("POST", "/api/v1/thinking-chains/recall/"),
        ("POST", "/api/v1/memories/{pk}/used/")}


def test_an_mcp_tool_that_writes_is_refused_to_a_read_only_token(alice, tools_on_the_test_thread):
    server = build_server(Caller(authorization=bearer(alice, name="mcp reader", scopes=["read"])))

    status, text = tool_answer(server, "remember", {"space": "alpha", "title": "Not for a reader",
                                                    "content": "A memory a reader may not add."})

    assert status == 403, text
    assert "insufficient_scope" in text
    assert tool_answer(server, "memory_stats", {"space": "alpha"})[0] == 200


# --- the admin --------------------------------------------------------------------------

def staff(username: str) -> tuple[object, Client]:
    user = UserFactory(username=username, is_staff=True)
    client = Client()
    client.force_login(user)
    return user, client


def test_staff_issue_their_own_token_in_the_admin_and_see_the_secret_once(alice):
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(alice)
    add = reverse("admin:governance_apitoken_add")
    assert 'name="name"' in client.get(add).content.decode()

    answer = client.post(add, {"name": "admin-made", "spaces": ["alpha"], "role": "viewer",
                               "scopes": ["read"], "expires_at": ""})

    token = ApiToken.objects.get(user=alice, name="admin-made")
    page = answer.content.decode()
    secret = page.split('id="token-secret-value" type="text" readonly value="')[1].split('"')[0]
    assert hash_token(secret) == token.key_hash
    assert "no-store" in answer["Cache-Control"]
    assert token.scopes == ["read"]
    assert token.role == "viewer"
    assert [s.slug for s in token.spaces.all()] == ["alpha"]
    listing = client.get(reverse("admin:governance_apitoken_changelist")).content.decode()
    assert "admin-made" in listing
    assert secret not in listing
    change_page = client.get(reverse("admin:governance_apitoken_change", args=[token.pk]))
    assert secret not in change_page.content.decode()
    issued = AuditEvent.objects.get(action="token_issue", target_id=str(token.pk))
    assert issued.actor_id == alice.pk

    refused = client.post(add, {"name": "too-high", "spaces": ["beta"], "role": "owner", "scopes": ["read"]})
    assert "above your own role" in refused.content.decode()
    unseen = client.post(add, {"name": "unseen", "spaces": ["gamma"], "scopes": ["read"]}).content.decode()
    missing = client.post(add, {"name": "unseen", "spaces": ["nope"], "scopes": ["read"]}).content.decode()
    assert "is not one of the available choices" in unseen
    assert unseen.replace("gamma", "nope") == missing.replace("gamma", "nope").replace(
        missing.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0],
        unseen.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0])
    assert not ApiToken.objects.filter(name__in=["too-high", "unseen"]).exists()


def test_staff_see_and_revoke_only_their_own_unless_allowed_to_revoke_any(alice):
    alices, _ = tokens.api_token_issue(user=alice, name="alice-laptop")
    plain_user, plain = staff("tok-staff")
    mine, _ = tokens.api_token_issue(user=plain_user, name="staff-own")
    changelist = reverse("admin:governance_apitoken_changelist")

    listing = plain.get(changelist).content.decode()
    assert "staff-own" in listing
    assert "alice-laptop" not in listing
    assert plain.get(reverse("admin:governance_apitoken_change", args=[alices.pk])).status_code == 302
    plain.post(changelist, {"action": "revoke_selected", "_selected_action": [alices.pk, mine.pk]})
    assert ApiToken.objects.get(pk=alices.pk).revoked_at is None
    assert ApiToken.objects.get(pk=mine.pk).revoked_at is not None

    allowed_user, allowed = staff("tok-security")
    allowed_user.user_permissions.add(Permission.objects.get(codename="revoke_any_token"))
    assert "alice-laptop" in allowed.get(changelist).content.decode()
    allowed.post(changelist, {"action": "revoke_selected", "_selected_action": [alices.pk]})
    revoked = ApiToken.objects.get(pk=alices.pk)
    assert revoked.revoked_at is not None
    assert AuditEvent.objects.get(action="token_revoke", target_id=str(alices.pk)).actor_id == allowed_user.pk


def test_the_command_issues_through_the_same_service_with_scopes(alice, capsys):
    from django.core.management import call_command

    call_command("sam_token", "--user", alice.username, "--space", "alpha", "--scope", "read")
    raw = capsys.readouterr().out.strip()
    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert token.scopes == ["read"]
    assert [s.slug for s in token.spaces.all()] == ["alpha"]
