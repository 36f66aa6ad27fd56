"""The admin: executions with progress, timeline and decisions; the log is read-only."""

import pytest
from django.contrib.admin.utils import quote
from django.urls import reverse

from prd.models import PRDEvent, PRDExecution
from tests.factories import UserFactory
from tests.prd.conftest import EXECUTIONS, appended, started


@pytest.fixture
def admin_client(client, db):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def execution(api, space):
    eid = started(api, requirements=[{"id": "R1"}, {"id": "R2"}])["id"]
    appended(api, eid, "requirement_started", "R1")
    appended(api, eid, "blocker_hit", "R1", summary="Waiting on the tax table")
    api.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "Tax computed server-side", "reason": "one truth"},
             format="json")
    return PRDExecution.objects.get(pk=eid)


def test_the_changelist_shows_progress(admin_client, execution):
    page = admin_client.get(reverse("admin:prd_prdexecution_changelist"))
    assert page.status_code == 200
    assert "0/2 done, 1 blocked" in page.content.decode()


def test_an_execution_page_shows_timeline_decisions_and_runs_read_only(admin_client, execution):
    page = admin_client.get(reverse("admin:prd_prdexecution_change", args=[quote(execution.pk)]))
    html = page.content.decode()

    assert page.status_code == 200
    assert "Waiting on the tax table" in html
    assert "Tax computed server-side" in html
    assert "first run" in html
    assert 'name="_save"' not in html
    response = admin_client.post(reverse("admin:prd_prdexecution_change", args=[quote(execution.pk)]),
                                 {"title": "Changed"})
    assert response.status_code == 403
    assert PRDExecution.objects.get(pk=execution.pk).title == "Checkout"


def test_events_can_be_viewed_but_not_added_changed_or_deleted(admin_client, execution):
    event = PRDEvent.objects.filter(execution=execution).first()
    assert admin_client.get(reverse("admin:prd_prdevent_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:prd_prdevent_change", args=[quote(event.pk)])).status_code == 200
    assert admin_client.get(reverse("admin:prd_prdevent_add")).status_code == 403
    assert admin_client.post(reverse("admin:prd_prdevent_delete", args=[quote(event.pk)]),
                             {"post": "yes"}).status_code == 403
    assert PRDEvent.objects.filter(pk=event.pk).exists()


def test_the_recompute_action_rebuilds_progress_from_the_log(admin_client, execution):
    PRDExecution.objects.filter(pk=execution.pk).update(progress={"completed": ["R1"], "in_progress": [],
                                                                  "blocked": [], "not_started": ["R2"]})
    response = admin_client.post(reverse("admin:prd_prdexecution_changelist"), {
        "action": "recompute_progress", "_selected_action": [execution.pk]}, follow=True)

    assert "1 needed a rebuild" in response.content.decode()
    assert PRDExecution.objects.get(pk=execution.pk).progress["blocked"] == ["R1"]


def test_append_only_rows_refuse_changes_in_code_too(execution):
    from prd.models import AppendOnlyError

    event = PRDEvent.objects.filter(execution=execution).first()
    event.summary = "rewritten"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
