"""The admin: executions with progress, timeline and decisions; the log, decisions and chains are
read-only; sealed text is searched through the keyed index, never by SQL matching."""

import pytest
from django.contrib.admin.utils import quote
from django.urls import reverse

from prd.models import PRDDecision, PRDEvent, PRDExecution, ThinkingChain
from tests.factories import UserFactory
from tests.prd.conftest import CHAINS, EXECUTIONS, appended, started


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


def changelist(admin_client, model: str, q: str) -> str:
    page = admin_client.get(reverse(f"admin:prd_{model}_changelist"), {"q": q})
    assert page.status_code == 200
    return page.content.decode()


def test_decisions_are_read_only_in_the_admin(admin_client, execution):
    decision = PRDDecision.objects.get(execution=execution)
    change = reverse("admin:prd_prddecision_change", args=[quote(decision.pk)])

    page = admin_client.get(change)
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert admin_client.post(change, {"decision": "Rewritten"}).status_code == 403
    assert admin_client.get(reverse("admin:prd_prddecision_add")).status_code == 403
    assert admin_client.post(reverse("admin:prd_prddecision_delete", args=[quote(decision.pk)]),
                             {"post": "yes"}).status_code == 403
    assert PRDDecision.objects.get(pk=decision.pk).decision == "Tax computed server-side"


def test_decisions_are_found_by_their_unsealed_columns(admin_client, execution, api):
    decision = PRDDecision.objects.get(execution=execution)
    api.post(f"{EXECUTIONS}{started(api, prd_ref='other.md')['id']}/decisions/",
             {"decision": "Another decision", "requirement_id": "R9"}, format="json")
    link = reverse("admin:prd_prddecision_change", args=[quote(decision.pk)])

    for term in (decision.pk, execution.pk, decision.event_id):
        assert link in changelist(admin_client, "prddecision", term)
    found = changelist(admin_client, "prddecision", "R9")
    assert link not in found
    assert "Another decision" in found


@pytest.fixture
def chains(api, space):
    ids = {}
    for query, thought in (
            ("How should checkout retry failed payments?", "Only network errors, with backoff"),
            ("Which font renders receipts?", "DejaVu Sans has every glyph")):
        chain = api.post(CHAINS, {"space": "webshop", "query": query}, format="json").json()["id"]
        api.post(f"{CHAINS}{chain}/thoughts/", {"content": thought}, format="json")
        ids[query.split()[0]] = chain
    return ids


def test_chains_are_read_only_in_the_admin(admin_client, chains):
    chain = chains["How"]
    change = reverse("admin:prd_thinkingchain_change", args=[quote(chain)])

    page = admin_client.get(change)
    assert page.status_code == 200
    assert "Only network errors, with backoff" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    assert admin_client.post(change, {"query": "Rewritten?"}).status_code == 403
    assert admin_client.get(reverse("admin:prd_thinkingchain_add")).status_code == 403
    assert admin_client.post(reverse("admin:prd_thinkingchain_delete", args=[quote(chain)]),
                             {"post": "yes"}).status_code == 403
    assert ThinkingChain.objects.get(pk=chain).query == "How should checkout retry failed payments?"


@pytest.mark.parametrize(("term", "expected"), [
    ("payments", "How"),  # a word of the question (sealed; found through the keyed index)
    ("glyph", "Which"),  # a word of a thought
    ("backoff network", "How"),
])
def test_chains_are_found_by_the_words_of_their_sealed_text(admin_client, chains, term, expected):
    html = changelist(admin_client, "thinkingchain", term)

    for name, chain in chains.items():
        link = reverse("admin:prd_thinkingchain_change", args=[quote(chain)])
        assert (link in html) == (name == expected)


def test_a_chain_is_found_by_its_id(admin_client, chains):
    html = changelist(admin_client, "thinkingchain", chains["Which"])
    assert reverse("admin:prd_thinkingchain_change", args=[quote(chains["Which"])]) in html
    assert reverse("admin:prd_thinkingchain_change", args=[quote(chains["How"])]) not in html
