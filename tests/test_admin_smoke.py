"""Every admin page opens: the changelist, add and change page of every registered model,
for a superuser and for a staff curator, each with data to show.

The models come from the admin's registry, so a model registered later is covered (and
fails here until the `populated` fixture makes one of it). Pages a reader may not open answer exactly
the refusals listed below, never a 500.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Group, Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db.models import Model
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils.timezone import now
from django_q.models import Task
from django_q.tasks import async_task

from core.models import Space
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.models import ApiToken, DataKey, UserMemorySettings
from governance.services import api_token_issue, membership_grant, user_mode_set
from prd.models import MemoryCard
from tests.factories import UserFactory, make_memory
from tests.personas import client_for
from tests.prd.conftest import CHAINS, EXECUTIONS, appended, started

FIXTURES = Path(__file__).parent / "fixtures"

# Apps whose model permissions an operator gives curators; users, groups and the job queue
# stay with superusers.
CURATOR_APPS = ("core", "memories", "governance", "audit", "prd", "retrieval")
# Powers over other people given one by one, never with an app's permissions: revoking anyone's
# API token.
NOT_GIVEN_TO_CURATORS = ("revoke_any_token",)

# Records SAM or the job cluster write and nobody adds by hand: no add page (403).
NO_ADD_PAGE = frozenset({
    "audit.AuditEvent", "governance.DataKey", "prd.PRDExecution",
    "prd.PRDEvent", "prd.PRDDecision", "prd.ThinkingChain", "prd.FormedMemory", "prd.AgentSession",
    "prd.SessionEvent", "prd.MemoryCard", "memories.ReviewItem", "memories.ChatImport", "memories.Entity",
    "retrieval.TrainingRun",
    "django_q.Success", "django_q.Failure", "django_q.OrmQ",
})
# Models outside CURATOR_APPS: a curator holds no permission on them, so every page is 403.
NOT_FOR_CURATORS = frozenset({
    "auth.User", "auth.Group", "django_q.Schedule", "django_q.Success", "django_q.Failure",
    "django_q.OrmQ",
})


def expected_status(reader: str, model_label: str, page: str) -> int:
    if reader == "curator" and model_label in NOT_FOR_CURATORS:
        return 403
    if page == "add" and model_label in NO_ADD_PAGE:
        return 403
    return 200


def label(model: type[Model]) -> str:
    return model._meta.label


def url(model: type[Model], page: str, obj: Model | None = None) -> str:
    name = f"admin:{model._meta.app_label}_{model._meta.model_name}_{page}"
    return reverse(name, args=[quote(obj.pk)] if obj is not None else [])


@pytest.fixture
def readers(db) -> dict[str, tuple[Client, object]]:
    boss = UserFactory(username="smoke-boss", is_staff=True, is_superuser=True)
    curator = UserFactory(username="smoke-curator", is_staff=True)
    curator.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=CURATOR_APPS)
        .exclude(codename__in=NOT_GIVEN_TO_CURATORS))
    clients = {}
    for name, user in (("superuser", boss), ("curator", curator)):
        client = Client()
        client.force_login(user)
        clients[name] = (client, user)
    return clients


@pytest.fixture
def populated(readers, on_commit) -> Space:
    """One object (at least) of every registered model, made the way SAM makes them."""
    owner = UserFactory(username="smoke-owner")
    api = client_for(owner)
    assert api.post("/api/v1/spaces/", {"slug": "webshop", "name": "Webshop"},
                    format="json").status_code == 201
    space = Space.objects.get(slug="webshop")
    membership_grant(actor=SYSTEM, space=space, role="curator", user=readers["curator"][1])
    with on_commit():  # the embedding job runs (inline) and leaves a Success row
        memory = make_memory(space)
    assert api.post(f"/api/v1/memories/{memory.id}/contradict/", {"reason": "smoke"},
                    format="json").status_code == 200  # a review item
    assert api.post(f"/api/v1/memories/{memory.id}/training/").status_code == 201  # a training run
    for user in (owner, readers["curator"][1]):
        api_token_issue(user=user, name="smoke")
    user_mode_set(actor=SYSTEM, user=UserFactory(username="smoke-paused"), mode="paused")
    user_mode_set(actor=SYSTEM, user=readers["curator"][1], mode="assist")
    Group.objects.create(name="smoke-team")
    call_command("sam_schedules", verbosity=0)
    # A failed job as the cluster records it (inline jobs raise instead of recording).
    Task.objects.create(id="smoke-failure", name="smoke-failure", func="math.sqrt", args=(-1,),
                        kwargs={}, result="math domain error", started=now(), stopped=now(),
                        success=False, attempt_count=1)
    async_task(math.sqrt, 4, sync=False)  # waits in the ORM queue: an OrmQ row

    with on_commit():
        eid = started(api, requirements=[{"id": "R1"}])["id"]
    with on_commit():
        appended(api, eid, "requirement_started", "R1")
    with on_commit():
        api.post(f"{EXECUTIONS}{eid}/decisions/", {"requirement_id": "R1", "decision": "Decimal money",
                                                   "reason": "floats round wrongly"}, format="json")
    chain = api.post(CHAINS, {"space": "webshop", "query": "How to retry payments?"}, format="json")
    assert chain.status_code == 201, chain.content
    assert api.post(f"{CHAINS}{chain.json()['id']}/thoughts/",
                    {"content": "Retry network errors only"}, format="json").status_code == 201
    with on_commit():
        assert api.post(f"{CHAINS}{chain.json()['id']}/complete/").status_code == 200
    session = api.post("/api/v1/sessions/", {"space": "webshop"}, format="json").json()["session"]["id"]
    with on_commit():  # the card job runs inline: a decision card with its evidence
        assert api.post(f"/api/v1/sessions/{session}/events/", {"events": [
            {"event_id": "s1", "event_type": "decision", "text": "Retry network errors only"}]},
            format="json").status_code == 201
    card = MemoryCard.objects.get(session_id=session)
    checked = api.post(f"/api/v1/cards/{card.id}/validations/", {"status": "pass"}, format="json")
    assert checked.status_code == 201
    assert api.patch("/api/v1/spaces/webshop/", {"capture_sources": ["jsonl"]},
                     format="json").status_code == 200
    chat = SimpleUploadedFile("chat.jsonl", (FIXTURES / "chat" / "generic.jsonl").read_bytes())
    with on_commit():  # the import job runs inline and writes its report
        assert api.post("/api/v1/spaces/webshop/chat-imports/", {"source": "jsonl", "file": chat},
                        format="multipart").status_code == 202
    return space


def visible_object(model_admin: admin.ModelAdmin, user) -> Model | None:
    request = RequestFactory().get("/admin/")
    request.user = user
    return model_admin.get_queryset(request).order_by("pk").first()


@pytest.mark.parametrize("reader", ["superuser", "curator"])
def test_every_admin_page_opens(readers, populated, reader):
    client, user = readers[reader]
    boss = readers["superuser"][1]
    answers: dict[tuple[str, str, str], int] = {}
    for model, model_admin in admin.site._registry.items():
        any_object = visible_object(model_admin, boss)
        assert any_object is not None, f"populate() makes no {label(model)}"
        shown = visible_object(model_admin, user)
        pages = {"changelist": url(model, "changelist"), "add": url(model, "add"),
                 "change": url(model, "change", shown or any_object)}
        for page, address in pages.items():
            answers[(reader, label(model), page)] = client.get(address).status_code

    unexpected = {key: status for key, status in answers.items()
                  if status != expected_status(*key)}
    assert unexpected == {}


def test_a_curator_opens_only_its_spaces_rows_and_its_own_tokens_and_mode(readers, populated):
    client, curator = readers["curator"]
    elsewhere = make_memory(Space.objects.create(slug="elsewhere", name="Elsewhere"))
    hidden = [
        elsewhere,
        DataKey.objects.get(space__slug="elsewhere", state="active"),
        ApiToken.objects.exclude(user=curator).first(),
        UserMemorySettings.objects.exclude(user=curator).first(),
    ]

    for obj in hidden:
        # As for an object that does not exist: back to the admin's index.
        response = client.get(url(type(obj), "change", obj))
        assert (response.status_code, response.get("Location")) == (302, reverse("admin:index")), obj

    tokens = client.get(url(ApiToken, "changelist")).context["cl"].result_list
    assert [token.user for token in tokens] == [curator]
    keys = client.get(url(DataKey, "changelist")).context["cl"].result_list
    assert {key.space.slug for key in keys} == {"webshop"}
    # Nor may it set another user's mode.
    other = UserFactory(username="smoke-other")
    refused = client.post(url(UserMemorySettings, "add"), {"user": other.pk, "mode": "off"})
    assert refused.status_code == 200
    assert "user" in refused.context["adminform"].form.errors
    assert not UserMemorySettings.objects.filter(user=other).exists()


def form_values(page) -> dict[str, str]:
    """What a browser would post back from an admin change page, inlines included."""
    forms = [page.context["adminform"].form]
    data: dict[str, str] = {}
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        forms += [formset.management_form, *formset.forms]
    for form in forms:
        for name in form.fields:
            if form.fields[name].disabled:
                continue
            value = form[name].value()
            if isinstance(value, list | tuple):
                value = ",".join(map(str, value))
            if value is not None and value is not False:
                data[form.add_prefix(name)] = "on" if value is True else str(value)
    return data


def test_the_space_change_form_saves_through_the_services(readers, populated):
    client, boss = readers["superuser"]
    space = populated
    address = url(Space, "change", space)
    page = client.get(address)
    assert page.status_code == 200
    data = {**form_values(page), "name": "Webshop (EU)", "mode": "paused"}

    response = client.post(address, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    space.refresh_from_db()
    assert (space.name, space.mode) == ("Webshop (EU)", "paused")
    assert space.slug == "webshop"
    # space_update audited the change, as the API's does.
    event = AuditEvent.objects.filter(space_id=space.pk, action="mode_change").latest("id")
    assert event.actor_id == boss.pk
    # The members were posted back unchanged and are still there.
    assert set(space.memberships.values_list("role", flat=True)) == {"owner", "curator"}
