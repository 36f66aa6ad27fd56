"""PRD executions through the HTTP API: start or resume, events, decisions, status, resume context."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from prd.models import PRDDecision, PRDEvent, PRDExecution, PRDRun, ThinkingChain
from tests.prd.conftest import CHAINS, EXECUTIONS, append, appended, start, started

REQUIREMENTS = [{"id": "R1", "title": "Cart", "hash": "a1"}, {"id": "R2", "title": "Payment", "hash": "b1"},
                {"id": "R3", "title": "Receipt", "hash": "c1"}]


# --- start or resume ------------------------------------------------------------------

def test_start_creates_an_execution_with_declared_requirements_not_started(api, space):
    response = start(api, prd_hash="h1", requirements=REQUIREMENTS, agent_id="claude-1")

    assert response.status_code == 201
    body = response.json()
    execution = body["execution"]
    assert execution["id"].startswith("prd_")
    assert execution["status"] == "not_started"
    assert execution["progress"] == {"completed": [], "in_progress": [], "blocked": [],
                                     "not_started": ["R1", "R2", "R3"]}
    assert body["created"] is True
    assert body["run"] == 1
    assert body["prd_changes"]["first_run"] is True
    assert PRDExecution.objects.get(pk=execution["id"]).space == space


def test_start_again_with_the_same_prd_ref_resumes_the_same_execution(api, space):
    first = started(api, prd_hash="h1")
    response = start(api, prd_hash="h1")

    assert response.status_code == 200
    body = response.json()
    assert body["execution"]["id"] == first["id"]
    assert body["created"] is False
    assert body["run"] == 2
    assert body["prd_changes"]["changed"] is False
    assert PRDExecution.objects.count() == 1
    assert PRDRun.objects.filter(execution_id=first["id"]).count() == 2


def test_resume_reports_what_changed_in_the_prd_and_which_progress_it_touches(api, space):
    execution = started(api, prd_hash="h1", requirements=REQUIREMENTS)
    appended(api, execution["id"], "requirement_started", "R1")
    appended(api, execution["id"], "requirement_completed", "R1")
    appended(api, execution["id"], "requirement_started", "R3")
    changed = [{"id": "R1", "title": "Cart", "hash": "a2"}, {"id": "R2", "title": "Payment", "hash": "b1"},
               {"id": "R4", "title": "Refunds"}]

    body = start(api, prd_hash="h2", requirements=changed).json()

    changes = body["prd_changes"]
    assert changes["changed"] is True
    assert changes["hash"] == {"before": "h1", "after": "h2"}
    assert changes["requirements_added"] == ["R4"]
    assert changes["requirements_removed"] == ["R3"]
    assert changes["requirements_modified"] == ["R1"]
    assert changes["affected"] == {"completed": ["R1"], "in_progress": ["R3"]}
    # R3 left the PRD but keeps its history; R4 is new.
    assert body["execution"]["progress"] == {"completed": ["R1"], "in_progress": ["R3"], "blocked": [],
                                             "not_started": ["R2", "R4"]}
    context = api.get(f"{EXECUTIONS}{execution['id']}/context/").json()
    assert context["prd_changes"]["requirements_modified"] == ["R1"]
    assert context["last_prd_change"]["number"] == 2


def test_the_last_prd_change_is_kept_after_later_unchanged_runs(api, space):
    started(api, prd_hash="h1")
    started(api, prd_hash="h2")
    execution = started(api, prd_hash="h2")

    context = api.get(f"{EXECUTIONS}{execution['id']}/context/").json()

    assert context["prd_changes"]["changed"] is False
    assert context["last_prd_change"]["number"] == 2
    assert context["last_prd_change"]["changes"]["hash"] == {"before": "h1", "after": "h2"}
    assert context["runs"] == 3


def test_prd_content_is_hashed_and_not_stored(api, space):
    execution = started(api, prd_content="# Checkout\n\nR1: cart")
    import hashlib

    assert execution["prd_hash"] == hashlib.sha256(b"# Checkout\n\nR1: cart").hexdigest()
    response = start(api, prd_content="# Checkout", prd_hash="not-the-hash")
    assert response.status_code == 400
    assert "prd_hash" in response.json()["error"]["fields"]


def test_resuming_a_paused_execution_puts_it_back_in_progress(api, space):
    execution = started(api)
    appended(api, execution["id"], "requirement_started", "R1")
    api.post(f"{EXECUTIONS}{execution['id']}/status/", {"status": "paused"}, format="json")

    assert started(api)["status"] == "in_progress"


def test_logging_work_on_a_paused_execution_resumes_it_and_a_blocked_one_stays_blocked(api, space):
    execution = started(api)
    status = f"{EXECUTIONS}{execution['id']}/status/"
    appended(api, execution["id"], "requirement_started", "R1")
    api.post(status, {"status": "paused"}, format="json")

    resumed = appended(api, execution["id"], "test_failed", "R1")

    assert resumed["execution"]["status"] == "in_progress"
    assert api.post(status, {"status": "blocked"}, format="json").json()["status"] == "blocked"
    # A blocker event does not set the status, and other events do not lift a hand-set one.
    appended(api, execution["id"], "blocker_hit", "R1", summary="Waiting on the tax table")
    assert appended(api, execution["id"], "blocker_resolved", "R1")["execution"]["status"] == "blocked"
    assert PRDExecution.objects.get(pk=execution["id"]).status == "blocked"


def test_an_execution_never_blocked_by_hand_stays_in_progress_through_blockers(api, space):
    execution = started(api)
    appended(api, execution["id"], "requirement_started", "R1")

    body = appended(api, execution["id"], "blocker_hit", "R1", summary="Waiting on the tax table")

    assert body["execution"]["status"] == "in_progress"
    assert body["execution"]["progress"]["blocked"] == ["R1"]


def test_resuming_a_completed_execution_reports_prd_changes_and_changes_nothing(api, space, on_commit):
    execution = started(api, prd_hash="h1", requirements=REQUIREMENTS)
    appended(api, execution["id"], "requirement_started", "R1")
    appended(api, execution["id"], "requirement_completed", "R1")
    with on_commit():
        api.post(f"{EXECUTIONS}{execution['id']}/status/", {"status": "completed"}, format="json")
    stored = PRDExecution.objects.get(pk=execution["id"])
    before = (stored.title, stored.prd_hash, stored.requirements, stored.progress, stored.state,
              stored.status)
    api.get(f"{EXECUTIONS}{execution['id']}/context/")  # cached now
    changed = [{"id": "R1", "title": "Cart", "hash": "a2"}, {"id": "R4", "title": "Refunds"}]

    response = start(api, title="Checkout v2", prd_hash="h2", requirements=changed)

    assert response.status_code == 200
    body = response.json()
    assert body["run"] == 2
    changes = body["prd_changes"]
    assert changes["changed"] is True
    assert changes["hash"] == {"before": "h1", "after": "h2"}
    assert changes["title"] == {"before": "Checkout", "after": "Checkout v2"}
    assert changes["requirements_added"] == ["R4"]
    assert changes["requirements_modified"] == ["R1"]
    assert changes["affected"] == {"completed": ["R1"]}
    assert body["execution"]["status"] == "completed"
    assert body["execution"]["title"] == "Checkout"
    stored.refresh_from_db()
    assert (stored.title, stored.prd_hash, stored.requirements, stored.progress, stored.state,
            stored.status) == before
    run = PRDRun.objects.get(execution=stored, number=2)
    assert (run.prd_hash, run.prd_changed) == ("h2", True)
    context = api.get(f"{EXECUTIONS}{execution['id']}/context/").json()
    assert context["runs"] == 2
    assert context["last_prd_change"]["number"] == 2
    # Every later start still compares with the PRD as completed.
    assert start(api, prd_hash="h2").json()["prd_changes"]["hash"] == {"before": "h1", "after": "h2"}


def test_start_redacts_the_title_and_requirement_titles_and_reports_them(api, space):
    response = start(api, title="Checkout for jo.ramos@shop.example", requirements=[
        {"id": "R1", "title": "Mail receipts to ana.lima@shop.example"}])

    assert response.status_code == 201, response.content
    body = response.json()
    paths = {(r["path"], r["kind"]) for r in body["redaction_report"]}
    assert paths == {("title", "email"), ("requirements[0].title", "email")}
    stored = PRDExecution.objects.get(pk=body["execution"]["id"])
    assert "@" not in stored.title
    assert "@" not in stored.requirements[0]["title"]
    assert stored.requirements[0]["id"] == "R1"


@pytest.mark.parametrize(("fields", "bad"), [
    ({"prd_ref": ""}, "prd_ref"),
    ({"prd_ref": "x" * 501}, "prd_ref"),
    ({"requirements": [{"id": "R1"}, {"id": "R1"}]}, "requirements[1].id"),
    ({"requirements": [{"title": "no id"}]}, "requirements[0].id"),
    ({"title": "t" * 301}, "title"),
])
def test_start_rejects_bad_fields(api, space, fields, bad):
    response = start(api, **fields)
    assert response.status_code == 400
    assert bad in response.json()["error"]["fields"]
    assert PRDExecution.objects.count() == 0


def test_start_in_an_unknown_space_is_404(api, space):
    assert start(api, space="nowhere").status_code == 404


# --- events ---------------------------------------------------------------------------

def test_appending_events_materialises_progress_and_numbers_the_log(api, space):
    execution = started(api, requirements=REQUIREMENTS)
    first = appended(api, execution["id"], "requirement_started", "R1", agent_id="claude-1",
                     detail={"files": ["cart.py"]})
    assert first["event"]["sequence"] == 1
    assert first["execution"]["status"] == "in_progress"
    assert first["execution"]["progress"]["in_progress"] == ["R1"]
    appended(api, execution["id"], "blocker_hit", "R2", summary="Payment sandbox is down")
    last = appended(api, execution["id"], "requirement_completed", "R1", summary="Cart done")

    assert last["event"]["sequence"] == 3
    assert last["execution"]["progress"] == {"completed": ["R1"], "in_progress": [], "blocked": ["R2"],
                                             "not_started": ["R3"]}
    stored = PRDEvent.objects.get(pk=first["event"]["id"])
    assert (stored.detail, stored.agent_id) == ({"files": ["cart.py"]}, "claude-1")


def test_an_event_that_does_not_fit_the_state_is_409_and_writes_nothing(api, space):
    execution = started(api)
    response = append(api, execution["id"], "requirement_completed", "R1")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict"
    assert "never started" in error["message"]
    assert PRDEvent.objects.count() == 0
    stored = PRDExecution.objects.get(pk=execution["id"])
    assert (stored.event_count, stored.status) == (0, "not_started")


@pytest.mark.parametrize(("body", "bad"), [
    ({"type": "deployed", "summary": "x"}, "type"),
    ({"type": "test_passed", "summary": ""}, "summary"),
    ({"type": "test_passed", "summary": "s" * 2001}, "summary"),
    ({"type": "test_passed", "summary": "ok", "detail": ["not", "an", "object"]}, "detail"),
    ({"type": "requirement_started", "summary": "no requirement"}, "requirement_id"),
    ({"type": "test_passed", "summary": "ok", "resolves": "evt_x"}, "resolves"),
    ({"type": "blocker_resolved", "summary": "ok", "resolves": "evt_unknown"}, "resolves"),
    ({"type": "test_passed", "summary": "ok", "thinking_chain": "chain_unknown"}, "thinking_chain"),
    ({"type": "decision_made", "summary": "ok", "detail": {"alternatives": "one"}}, "detail.alternatives"),
])
def test_bad_event_fields_are_400_with_the_field_named(api, space, body, bad):
    execution = started(api)
    response = api.post(f"{EXECUTIONS}{execution['id']}/events/", body, format="json")

    assert response.status_code == 400, response.content
    assert bad in response.json()["error"]["fields"]
    assert PRDEvent.objects.count() == 0


def test_events_for_an_unknown_execution_are_404(api, space):
    response = append(api, "prd_01HZZZZZZZZZZZZZZZZZZZZZZZ", "test_passed")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_blocker_resolution_names_the_blocker_it_closes(api, space):
    execution = started(api)
    appended(api, execution["id"], "requirement_started", "R1")
    blocker = appended(api, execution["id"], "blocker_hit", "R1", summary="CI has no Postgres")["event"]
    resolved = appended(api, execution["id"], "blocker_resolved", summary="Added a Postgres service",
                        resolves=blocker["id"])

    assert resolved["event"]["resolves"] == blocker["id"]
    assert resolved["event"]["requirement_id"] == "R1"  # taken from the blocker
    assert resolved["execution"]["progress"]["in_progress"] == ["R1"]
    again = append(api, execution["id"], "blocker_resolved", resolves=blocker["id"])
    assert again.status_code == 409


def test_an_idempotency_key_makes_a_retried_append_return_the_first_event(api, space):
    execution = started(api)
    body = {"idempotency_key": "step-1"}
    first = append(api, execution["id"], "requirement_started", "R1", **body)
    retried = append(api, execution["id"], "requirement_started", "R1", **body)

    assert first.status_code == 201
    assert retried.status_code == 200
    assert retried.json()["replayed"] is True
    assert retried.json()["event"]["id"] == first.json()["event"]["id"]
    assert PRDEvent.objects.count() == 1
    other = append(api, execution["id"], "test_passed", "R1", **body)
    assert other.status_code == 409


def test_the_full_log_is_listed_and_filtered(api, space):
    execution = started(api)
    appended(api, execution["id"], "requirement_started", "R1")
    appended(api, execution["id"], "test_failed", "R1")
    appended(api, execution["id"], "requirement_started", "R2")
    url = f"{EXECUTIONS}{execution['id']}/events/"

    assert [e["sequence"] for e in api.get(url).json()["results"]] == [1, 2, 3]
    assert [e["sequence"] for e in api.get(url, {"requirement_id": "R1"}).json()["results"]] == [1, 2]
    assert [e["sequence"] for e in api.get(url, {"type": "test_failed"}).json()["results"]] == [2]
    assert [e["sequence"] for e in api.get(url, {"after_sequence": 2}).json()["results"]] == [3]


# --- decisions ------------------------------------------------------------------------

def test_recording_a_decision_logs_a_decision_made_event(api, space):
    execution = started(api)
    response = api.post(f"{EXECUTIONS}{execution['id']}/decisions/", {
        "requirement_id": "R2", "decision": "Use Stripe Checkout", "reason": "PCI scope stays with Stripe",
        "alternatives": ["Adyen", "own card form"], "agent_id": "claude-1",
    }, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["decision"]["alternatives"] == ["Adyen", "own card form"]
    assert body["event"]["type"] == "decision_made"
    assert body["decision"]["event"] == body["event"]["id"]
    listed = api.get(f"{EXECUTIONS}{execution['id']}/decisions/").json()["results"]
    assert [d["decision"] for d in listed] == ["Use Stripe Checkout"]


def test_a_decision_made_event_records_its_decision_from_the_detail(api, space):
    execution = started(api)
    appended(api, execution["id"], "decision_made", "R1", summary="Sessions in Redis",
             detail={"reason": "shared by both web nodes", "alternatives": ["sticky sessions"]})

    decision = PRDDecision.objects.get()
    assert (decision.decision, decision.reason, decision.alternatives) == (
        "Sessions in Redis", "shared by both web nodes", ["sticky sessions"])


@pytest.mark.parametrize(("body", "bad"), [
    ({"decision": ""}, "decision"),
    ({"decision": "ok", "alternatives": ["x"] * 21}, "alternatives"),
    ({"decision": "ok", "alternatives": ["x" * 1001]}, "alternatives[0]"),
])
def test_bad_decisions_are_400(api, space, body, bad):
    execution = started(api)
    response = api.post(f"{EXECUTIONS}{execution['id']}/decisions/", body, format="json")
    assert response.status_code == 400
    assert bad in response.json()["error"]["fields"]
    assert PRDDecision.objects.count() == 0


# --- status ---------------------------------------------------------------------------

def test_completing_needs_every_started_requirement_done_and_no_open_blocker(api, space):
    execution = started(api)
    appended(api, execution["id"], "requirement_started", "R1")
    appended(api, execution["id"], "blocker_hit", summary="Staging is down")
    url = f"{EXECUTIONS}{execution['id']}/status/"

    refused = api.post(url, {"status": "completed"}, format="json")

    assert refused.status_code == 409
    assert set(refused.json()["error"]["fields"]) == {"progress.in_progress", "open_blockers"}
    assert PRDExecution.objects.get(pk=execution["id"]).status == "in_progress"
    appended(api, execution["id"], "requirement_completed", "R1")
    appended(api, execution["id"], "blocker_resolved", summary="Staging is back")
    done = api.post(url, {"status": "completed"}, format="json")
    assert done.status_code == 200
    assert done.json()["completed_at"]


def test_a_completed_execution_is_final(api, space, on_commit):
    execution = started(api)
    url = f"{EXECUTIONS}{execution['id']}/status/"
    with on_commit():
        assert api.post(url, {"status": "completed"}, format="json").status_code == 200

    assert api.post(url, {"status": "in_progress"}, format="json").status_code == 409
    assert append(api, execution["id"], "test_passed").status_code == 409
    decision = api.post(f"{EXECUTIONS}{execution['id']}/decisions/", {"decision": "late"}, format="json")
    assert decision.status_code == 409
    assert api.post(url, {"status": "completed"}, format="json").status_code == 200  # no-op


def test_status_rejects_unknown_values_and_going_back_to_not_started(api, space):
    execution = started(api)
    url = f"{EXECUTIONS}{execution['id']}/status/"
    assert api.post(url, {"status": "done"}, format="json").status_code == 400
    appended(api, execution["id"], "test_passed")
    assert api.post(url, {"status": "not_started"}, format="json").status_code == 409


# --- resume context -------------------------------------------------------------------

def test_the_resume_context_holds_progress_events_decisions_learnings_and_open_ends(api, space):
    execution = started(api, requirements=REQUIREMENTS)
    eid = execution["id"]
    appended(api, eid, "requirement_started", "R1")
    api.post(f"{EXECUTIONS}{eid}/decisions/", {"requirement_id": "R1", "decision": "Cart in Postgres",
                                               "reason": "one store"}, format="json")
    appended(api, eid, "test_failed", "R1", summary="test_cart_total fails on rounding")
    appended(api, eid, "revision", "R1", summary="Use Decimal for money")
    appended(api, eid, "test_passed", "R1", summary="Cart tests green with Decimal")
    appended(api, eid, "requirement_completed", "R1", summary="Cart done")
    appended(api, eid, "requirement_started", "R2")
    appended(api, eid, "blocker_hit", "R2", summary="No sandbox keys")
    appended(api, eid, "test_failed", "R3", summary="Receipt PDF font missing")

    context = api.get(f"{EXECUTIONS}{eid}/context/", {"event_limit": 3}).json()

    assert context["progress"] == {"completed": ["R1"], "in_progress": [], "blocked": ["R2"],
                                   "not_started": ["R3"]}
    assert [e["sequence"] for e in context["recent_events"]] == [7, 8, 9]
    assert context["total_events"] == 9
    assert [d["decision"] for d in context["decisions"]] == ["Cart in Postgres"]
    [learning] = context["learnings"]
    assert learning["kind"] == "failure_fixed"
    assert learning["problem"]["summary"] == "test_cart_total fails on rounding"
    assert learning["fix"]["summary"] == "Cart tests green with Decimal"
    assert "this fixed it: Cart tests green with Decimal" in learning["text"]
    assert [b["summary"] for b in context["open_blockers"]] == ["No sandbox keys"]
    assert [f["summary"] for f in context["open_failures"]] == ["Receipt PDF font missing"]
    without = api.get(f"{EXECUTIONS}{eid}/context/", {"include_decisions": "false"}).json()
    assert without["decisions"] is None


def test_the_context_query_count_does_not_grow_with_the_log(api, space):
    execution = started(api)
    eid = execution["id"]

    def queries() -> int:
        cache.clear()  # count the queries of a context built afresh
        with CaptureQueriesContext(connection) as captured:
            assert api.get(f"{EXECUTIONS}{eid}/context/").status_code == 200
        return len(captured)

    def work(requirement: str) -> None:
        appended(api, eid, "requirement_started", requirement)
        api.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": f"choice for {requirement}"}, format="json")
        appended(api, eid, "blocker_hit", requirement)
        appended(api, eid, "blocker_resolved", requirement)
        appended(api, eid, "requirement_completed", requirement)

    work("R1")
    queries()  # the first request also records the token's last use
    few = queries()
    for n in range(2, 12):
        work(f"R{n}")
    assert queries() == few


def test_the_context_event_limit_is_bounded(api, space):
    execution = started(api)
    response = api.get(f"{EXECUTIONS}{execution['id']}/context/", {"event_limit": 500})
    assert response.status_code == 400
    assert "event_limit" in response.json()["error"]["fields"]


def test_executions_are_listed_by_space_status_and_ref(api, space):
    one = started(api, prd_ref="a.md")
    started(api, prd_ref="b.md")
    appended(api, one["id"], "test_passed")

    assert api.get(EXECUTIONS).json()["count"] == 2
    assert [e["id"] for e in api.get(EXECUTIONS, {"status": "in_progress"}).json()["results"]] == [one["id"]]
    assert [e["id"] for e in api.get(EXECUTIONS, {"prd_ref": "a.md"}).json()["results"]] == [one["id"]]
    assert api.get(EXECUTIONS, {"status": "sleeping"}).status_code == 400


# --- who may do what ------------------------------------------------------------------

def test_viewers_read_but_may_not_write(personas, space):
    owner, viewer = personas["owner"], personas["viewer"]
    execution = started(owner)
    eid = execution["id"]

    assert viewer.get(f"{EXECUTIONS}{eid}/context/").status_code == 200
    assert viewer.get(EXECUTIONS).json()["count"] == 1
    assert start(viewer).status_code == 403
    assert append(viewer, eid, "test_passed").status_code == 403
    assert viewer.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "x"}, format="json").status_code == 403
    assert viewer.post(f"{EXECUTIONS}{eid}/status/", {"status": "paused"}, format="json").status_code == 403
    assert viewer.post(CHAINS, {"space": "webshop", "query": "why?"}, format="json").status_code == 403
    assert PRDEvent.objects.count() == 0


def test_contributors_write(personas, space):
    execution = started(personas["owner"])
    assert append(personas["contributor"], execution["id"], "test_passed").status_code == 201


def test_strangers_see_nothing(personas, space):
    execution = started(personas["owner"])
    stranger = personas["stranger"]

    assert stranger.get(EXECUTIONS).json()["count"] == 0
    assert stranger.get(f"{EXECUTIONS}{execution['id']}/").status_code == 404
    assert stranger.get(f"{EXECUTIONS}{execution['id']}/context/").status_code == 404
    assert append(stranger, execution["id"], "test_passed").status_code == 404
    assert start(stranger).status_code == 404


@pytest.fixture
def owned(personas, space) -> dict[str, str]:
    """An execution with an event and a decision, and an active chain with a thought, of the owner."""
    owner = personas["owner"]
    eid = started(owner)["id"]
    appended(owner, eid, "requirement_started", "R1")
    owner.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "Money as Decimal"}, format="json")
    chain = owner.post(CHAINS, {"space": "webshop", "query": "Retry payments how?"},
                       format="json").json()["id"]
    owner.post(f"{CHAINS}{chain}/thoughts/", {"content": "Retry network errors only"}, format="json")
    return {"execution": eid, "chain": chain}


def test_strangers_get_404_for_the_log_decisions_status_and_chains(personas, owned):
    stranger = personas["stranger"]
    eid, chain = owned["execution"], owned["chain"]

    assert stranger.get(f"{EXECUTIONS}{eid}/events/").status_code == 404
    assert stranger.get(f"{EXECUTIONS}{eid}/decisions/").status_code == 404
    assert stranger.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "x"}, format="json").status_code == 404
    assert stranger.post(f"{EXECUTIONS}{eid}/status/", {"status": "paused"}, format="json").status_code == 404
    thought = {"content": "mine now"}
    assert stranger.post(f"{CHAINS}{chain}/thoughts/", thought, format="json").status_code == 404
    assert stranger.post(f"{CHAINS}{chain}/complete/").status_code == 404
    assert stranger.post(f"{CHAINS}{chain}/abandon/", {"reason": "x"}, format="json").status_code == 404
    assert stranger.get(CHAINS).json()["count"] == 0
    stored = PRDExecution.objects.get(pk=eid)
    assert (stored.status, stored.event_count) == ("in_progress", 2)
    assert ThinkingChain.objects.get(pk=chain).status == "active"
    assert len(ThinkingChain.objects.get(pk=chain).thoughts) == 1


def test_viewers_read_the_log_and_chains_but_may_not_change_them(personas, owned):
    viewer = personas["viewer"]
    eid, chain = owned["execution"], owned["chain"]

    assert viewer.get(f"{EXECUTIONS}{eid}/events/").json()["count"] == 2
    assert viewer.get(f"{EXECUTIONS}{eid}/decisions/").json()["count"] == 1
    assert viewer.get(f"{CHAINS}{chain}/").status_code == 200
    thought = {"content": "mine now"}
    assert viewer.post(f"{CHAINS}{chain}/thoughts/", thought, format="json").status_code == 403
    assert viewer.post(f"{CHAINS}{chain}/complete/").status_code == 403
    assert viewer.post(f"{CHAINS}{chain}/abandon/", {"reason": "x"}, format="json").status_code == 403
    stored = ThinkingChain.objects.get(pk=chain)
    assert (stored.status, len(stored.thoughts)) == ("active", 1)


@pytest.mark.parametrize(("method", "url"), [
    ("get", EXECUTIONS), ("post", EXECUTIONS), ("get", f"{EXECUTIONS}prd_x/context/"),
    ("post", f"{EXECUTIONS}prd_x/events/"), ("get", CHAINS), ("post", f"{CHAINS}recall/"),
])
def test_anonymous_callers_get_401(anon, db, method, url):
    response = getattr(anon, method)(url)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_the_context_returns_the_newest_learnings_up_to_the_limit(api, space):
    eid = started(api)["id"]
    appended(api, eid, "requirement_started", "R1")
    for n in range(3):
        appended(api, eid, "test_failed", "R1", summary=f"failure {n}")
        appended(api, eid, "test_passed", "R1", summary=f"fix {n}")

    limited = api.get(f"{EXECUTIONS}{eid}/context/", {"learning_limit": 2}).json()
    everything = api.get(f"{EXECUTIONS}{eid}/context/").json()

    assert [item["fix"]["summary"] for item in limited["learnings"]] == ["fix 1", "fix 2"]
    assert limited["learnings_total"] == everything["learnings_total"] == 3
    assert len(everything["learnings"]) == 3


def test_a_repeated_read_is_served_from_the_cache_until_the_next_write(api, space):
    eid = started(api)["id"]
    appended(api, eid, "requirement_started", "R1")
    url = f"{EXECUTIONS}{eid}/context/"
    first = api.get(url).json()

    with CaptureQueriesContext(connection) as captured:
        again = api.get(url).json()
    assert again == first
    assert not any("prd_prdevent" in q["sql"] for q in captured.captured_queries)

    appended(api, eid, "requirement_completed", "R1")
    fresh = api.get(url).json()
    assert fresh["progress"]["completed"] == ["R1"]
    assert fresh["total_events"] == 2
