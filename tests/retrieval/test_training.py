"""Micro-training: suggested examples, runs against real recall (real model, real store),
their history, the API, and failures queued for review by the nightly job."""

from __future__ import annotations

import pytest

from governance.audit.models import AuditEvent
from memories.lifecycle import training as suggestions
from memories.models import Memory, ReviewItem
from retrieval import training
from retrieval.models import TrainingRun
from samsite import maintenance
from tests.factories import make_memory
from tests.personas import member_client

SNACKBAR = {
    "title": "Use MudSnackbar for save confirmations",
    "content": "After a form saves, confirm with a short MudSnackbar message; never open a MudDialog for it.",
    "summary": "Confirm saves with a short MudSnackbar, not a MudDialog.",
    "canonical_phrases": ["save confirmation", "mudsnackbar message"],
    "kind": "preference",
}


@pytest.fixture
def store(space, on_commit) -> Memory:
    """The memory under test among a few others, all embedded by the real model."""
    with on_commit():
        memory = make_memory(space, **SNACKBAR)
        make_memory(space, title="Money is stored as Decimal", content="Amounts are Decimal, never float.")
        make_memory(space, title="Deploys on Tuesdays", content="Production deploys happen on Tuesdays.")
        make_memory(space, title="Use pytest fixtures", content="Tests are pytest functions with fixtures.")
    return Memory.objects.select_related("space").get(pk=memory.pk)


def test_suggestions_are_deterministic_and_hold_their_own_assertions():
    first = suggestions.suggest(title="Use MudSnackbar", summary="Confirm saves with a MudSnackbar.",
                                canonical_phrases=["save confirmation"])
    again = suggestions.suggest(title="Use MudSnackbar", summary="Confirm saves with a MudSnackbar.",
                                canonical_phrases=["save confirmation"])
    many = suggestions.suggest(title="T", summary="S", canonical_phrases=[f"phrase {n}" for n in range(7)])

    assert first == again
    assert [e["id"] for e in first] == ["tr_auto_01", "tr_auto_02"]
    assert "save confirmation" in first[0]["user"]
    for example in first:
        assert all(a in example["assistant"].lower() for a in example["assertions"])
    assert many[-1]["assertions"] == [suggestions.NOT_RECALLED]


def test_a_memory_passes_its_suggested_examples_and_the_run_is_kept(store):
    run = training.run_memory(store)

    assert run.suggested is True
    assert run.examples == 2
    assert run.passed == 2, run.results
    assert all(r["rank"] is not None and r["rank"] <= training.TOP_N for r in run.results)
    assert TrainingRun.objects.filter(memory=store).count() == 1


def test_a_training_run_is_audited_as_an_untracked_recall_of_its_space(api, store, user):
    before = AuditEvent.objects.filter(action="recall").count()

    assert api.post(f"/api/v1/memories/{store.id}/training/").status_code == 201
    nightly = training.run_memory(store)

    asked, scheduled = AuditEvent.objects.filter(action="recall").order_by("id")[before:]
    run = TrainingRun.objects.filter(memory=store).order_by("ran_at").first()
    assert (asked.actor_id, asked.space_id) == (user.id, store.space_id)
    assert (asked.target_type, asked.target_id) == ("trainingrun", str(run.pk))
    assert asked.payload_data["after"]["recalls"] == run.examples == 2
    assert asked.payload_data["after"]["purpose"] == "micro_training"
    assert asked.payload_data["after"]["tracked"] is False
    assert asked.payload_data["after"]["items"] >= 2  # the memory itself, in the top 5 of each
    assert scheduled.actor_id is None
    assert scheduled.target_id == str(nightly.pk)
    assert SNACKBAR["canonical_phrases"][0] not in str(asked.payload_data)


def test_a_space_out_of_recall_runs_no_training_and_audits_no_recall(store):
    store.space.mode = "off"
    store.space.save()
    before = AuditEvent.objects.filter(action="recall").count()

    assert training.run_memory(store) is None
    assert AuditEvent.objects.filter(action="recall").count() == before


def test_an_example_the_memory_does_not_answer_fails_with_its_reason(store):
    wrong = {"id": "tr_1", "user": "How do we store amounts of money?", "assistant": "Use MudSnackbar.",
             "assertions": ["mudsnackbar", "forbidden:mudsnackbar"]}
    unrelated = {"id": "tr_2", "user": suggestions.UNRELATED_REQUEST, "assistant": "No memory.",
                 "assertions": [suggestions.NOT_RECALLED]}

    failed = training.run_example(store, wrong)
    passed = training.run_example(store, unrelated)

    assert not failed.passed
    assert "the expected answer contains the forbidden 'mudsnackbar'" in failed.reasons
    assert passed.passed, passed.reasons


def test_the_api_shows_suggestions_and_runs_them_for_editors_only(api, store, space):
    viewer = member_client(space, "viewer", "training-viewer")

    shown = viewer.get(f"/api/v1/memories/{store.id}/training/")
    assert shown.status_code == 200
    assert shown.json()["suggested"] is True
    assert len(shown.json()["examples"]) == 2
    assert viewer.post(f"/api/v1/memories/{store.id}/training/").status_code == 403
    assert member_client(space, None, "training-stranger").get(
        f"/api/v1/memories/{store.id}/training/").status_code == 404

    ran = api.post(f"/api/v1/memories/{store.id}/training/")

    assert ran.status_code == 201
    assert ran.json()["runs"][0]["pass_rate"] == 1.0


def test_the_nightly_job_tests_what_changed_and_queues_failures(api, store):
    bad = [{"id": "tr_bad", "user": "When do production deploys happen?", "assistant": "Use MudSnackbar.",
            "assertions": ["mudsnackbar"]}]
    edited = api.patch(f"/api/v1/memories/{store.id}/", {"training_examples": bad, "version": store.version},
                       format="json")
    assert edited.status_code == 200, edited.content

    report = maintenance.nightly()

    assert store.id in report["training_failures"]
    item = ReviewItem.objects.get(kind="training_failure", memory=store)
    assert item.evidence == {"pass_rate": 0.0}
    # Tested since its last change: not due again until it changes.
    assert store.id not in [m.id for m in training.due()]


@pytest.mark.parametrize(("assertion", "holds"), [
    ("MudSnackbar", True), ("mentions MudSnackbar", True), ("does not propose MudDialog", True),
    ("forbidden:muddialog", True), ("avoid MudDialog", False), ("mentions MudDialog", False),
    ("does not mention MudSnackbar", False), ("provides snippet or steps", False),
])
def test_assertions_read_seed_000s_prose(assertion, holds):
    example = {"assistant": "Use MudSnackbar to show a success message, keep it short, no dialog.",
               "assertions": [assertion]}

    assert (training._assertions_hold(example) == []) is holds


def test_an_assertion_that_quotes_the_answer_holds_as_written():
    # Seed 000's template: "avoid MudDialog" is what the answer says, not a ban on the word.
    example = {"assistant": "Use MudSnackbar for the confirmation, avoid MudDialog for this alert use case.",
               "assertions": ["MudSnackbar", "avoid MudDialog"]}

    assert training._assertions_hold(example) == []


# --- the admin: recall inspector and micro-training panel ------------------------------


@pytest.fixture
def curator_browser(space):
    from django.contrib.auth.models import Permission
    from django.test import Client

    from governance.access import SYSTEM
    from governance.services import membership_grant
    from tests.factories import UserFactory

    curator = UserFactory(username="inspector-curator", is_staff=True)
    # What an operator gives curators: the model permissions of SAM's apps.
    curator.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["memories", "retrieval", "core"]))
    membership_grant(actor=SYSTEM, space=space, user=curator, role="curator")
    client = Client()
    client.force_login(curator)
    return client


def test_the_inspector_shows_where_a_memory_ranks_and_runs_its_examples(api, curator_browser, store):
    from django.contrib.admin.utils import quote
    from django.urls import reverse

    page = reverse("admin:retrieval_trainingrun_inspect", args=[quote(store.pk)])
    memory_page = curator_browser.get(reverse("admin:memories_memory_change", args=[quote(store.pk)]))
    assert page in memory_page.content.decode()

    asked = api.post("/api/v1/recall/", {"query": "which message after saving a form?", "track": True},
                     format="json")
    assert asked.json()["data"]["ranked_memory_list"][0]["id"] == store.pk

    ranked = curator_browser.get(page, {"query": "how do we confirm that a form saved?"})
    assert ranked.status_code == 200
    assert ranked.context["ranking"]["rank"] == 1
    assert [q["query"] for q in ranked.context["past_queries"]] == ["which message after saving a form?"]

    ran = curator_browser.post(page, {"run_training": "1"}, follow=True)
    assert "2 of 2 passed" in ran.content.decode()
    assert TrainingRun.objects.filter(memory=store).count() == 1


def test_the_inspector_does_not_open_a_memory_the_reader_cannot_see(store, db):
    from django.contrib.admin.utils import quote
    from django.test import Client
    from django.urls import reverse

    from tests.factories import UserFactory

    outsider = UserFactory(username="inspector-outsider", is_staff=True)
    client = Client()
    client.force_login(outsider)

    answer = client.get(reverse("admin:retrieval_trainingrun_inspect", args=[quote(store.pk)]), follow=True)

    assert store.title not in answer.content.decode()
    assert not TrainingRun.objects.exists()


def test_a_viewer_sees_the_ranking_but_not_what_others_asked(store, space):
    from django.contrib.admin.utils import quote
    from django.contrib.auth.models import Permission
    from django.test import Client
    from django.urls import reverse

    from governance.access import SYSTEM
    from governance.services import membership_grant
    from tests.factories import UserFactory

    viewer = UserFactory(username="inspector-viewer", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["memories", "retrieval"]))
    membership_grant(actor=SYSTEM, space=space, user=viewer, role="viewer")
    client = Client()
    client.force_login(viewer)
    page = reverse("admin:retrieval_trainingrun_inspect", args=[quote(store.pk)])

    shown = client.get(page, {"query": "how do we confirm that a form saved?"})
    refused = client.post(page, {"run_training": "1"}, follow=True)

    assert shown.context["ranking"]["rank"] == 1
    assert shown.context["past_queries"] is None
    # Audited, as every recall is.
    assert AuditEvent.objects.filter(action="recall", actor_id=viewer.pk).count() == 1
    assert "You may not edit" in refused.content.decode()
    assert not TrainingRun.objects.exists()
