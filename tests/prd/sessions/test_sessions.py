"""Coding sessions through the REST API: the event envelope, idempotency, redaction and
sealing, modes and roles, cards compiled and checked, handoffs, and what packs show."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from governance.audit.models import AuditEvent
from prd.models import AgentSession, CardValidation, MemoryCard, SessionEvent
from tests.factories import SpaceFactory
from tests.personas import client_for, member_client

SESSIONS = "/api/v1/sessions/"
CARDS = "/api/v1/cards/"
PACKS = "/api/v1/context-packs/"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def at(minutes: int) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def start(api, space: str = "webshop", **fields: Any) -> dict:
    response = api.post(SESSIONS, {"space": space, **fields}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()["session"]


def log(api, session_id: str, *events: dict[str, Any], status: int = 201) -> dict:
    response = api.post(f"{SESSIONS}{session_id}/events/", {"events": list(events)}, format="json")
    assert response.status_code == status, response.content
    return response.json()


def ev(event_id: str, event_type: str, minute: int, text: str = "", **fields: Any) -> dict[str, Any]:
    return {"event_id": event_id, "event_type": event_type, "ts": at(minute), "text": text, **fields}


# A session that exercises every card rule: a decision, a test that failed and was fixed by
# a change, a command that succeeds twice, and a handoff with next steps and a question.
WORKDAY = [
    ev("e1", "chat_turn", 0, "Add refunds to the checkout", role="user"),
    ev(
        "e2",
        "decision",
        1,
        "Refunds go through the payments service, not the shop",
        data={"reason": "one place talks to Stripe"},
    ),
    ev("e3", "command_run", 2, "", data={"command": "pytest tests/refunds", "exit_code": 0}),
    ev(
        "e4",
        "test_result",
        3,
        "test_partial_refund: AssertionError 10.00 != 9.99",
        data={"name": "test_partial_refund", "status": "failed"},
    ),
    ev("e5", "file_change", 4, data={"path": "shop/refunds.py", "change": "modified"}),
    ev("e6", "test_result", 5, "all green", data={"name": "test_partial_refund", "status": "passed"}),
    ev("e7", "command_run", 6, "", data={"command": "pytest tests/refunds", "exit_code": 0}),
    ev("e8", "command_run", 7, "", data={"command": "git push origin refunds", "exit_code": 0}),
    ev(
        "e9",
        "handoff",
        8,
        "Refunds work end to end; the webhook is next",
        data={
            "next_steps": ["Handle the refund.updated webhook"],
            "open_questions": ["Do partial refunds need approval?"],
        },
    ),
]


@pytest.fixture
def workday(api, space, on_commit) -> dict:
    session = start(api, key="laptop-2026-11-02", title="Refunds", agent_id="claude-code")
    with on_commit():
        log(api, session["id"], *WORKDAY)
    return session


# --- events ---------------------------------------------------------------------------


def test_a_batch_is_stored_in_the_seed_envelope_in_order(api, space):
    session = start(api)
    body = log(api, session["id"], *WORKDAY[:3])

    assert body["created"] == 3
    assert body["replayed"] == 0
    events = [e["event"] for e in body["events"]]
    assert [e["sequence"] for e in events] == [1, 2, 3]
    first = events[0]
    assert first["event_id"] == "e1"
    assert first["session_id"] == session["id"]
    assert first["project_id"] == "webshop"
    assert first["source"] == "chat"  # the default for a chat turn
    assert first["role"] == "user"
    assert first["hash"].startswith("hmac-sha256:")
    assert first["redaction"] == {"redacted": False, "redactions": []}
    assert first["actor"] == {"user": "owner", "agent_id": ""}
    assert events[2]["source"] == "terminal"
    listed = api.get(f"{SESSIONS}{session['id']}/events/?event_type=command_run").json()["results"]
    assert [e["event_id"] for e in listed] == ["e3"]
    assert api.get(f"{SESSIONS}{session['id']}/").json()["event_count"] == 3


def test_starting_again_with_the_same_key_resumes_the_session(api, space):
    first = api.post(SESSIONS, {"space": "webshop", "key": "k1"}, format="json")
    again = api.post(SESSIONS, {"space": "webshop", "key": "k1"}, format="json")

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["session"]["id"] == first.json()["session"]["id"]


def test_sending_the_same_events_again_replays_them_and_stores_nothing(api, space):
    session = start(api)
    log(api, session["id"], *WORKDAY[:4])
    again = log(api, session["id"], *WORKDAY[:4], status=200)

    assert again["created"] == 0
    assert again["replayed"] == 4
    assert [e["created"] for e in again["events"]] == [False] * 4
    assert SessionEvent.objects.filter(session_id=session["id"]).count() == 4


def test_a_retry_without_a_time_still_replays(api, space):
    session = start(api)
    untimed = {"event_id": "x1", "event_type": "chat_turn", "text": "hello"}
    log(api, session["id"], untimed)

    assert log(api, session["id"], untimed, status=200)["replayed"] == 1


def test_an_event_id_reused_for_other_content_is_a_conflict_naming_the_event(api, space):
    session = start(api)
    log(api, session["id"], WORKDAY[0])
    response = api.post(
        f"{SESSIONS}{session['id']}/events/",
        {"events": [WORKDAY[1], {**WORKDAY[0], "text": "Something else"}]},
        format="json",
    )

    assert response.status_code == 409
    assert "events[1].event_id" in response.json()["error"]["fields"]
    # All or none: the new event of the refused batch was not stored either.
    assert SessionEvent.objects.filter(session_id=session["id"]).count() == 1


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ({"event_type": "meeting", "text": "x"}, "events[0].event_type"),
        ({"event_type": "test_result", "text": "x"}, "events[0].data.status"),
        ({"event_type": "file_change", "text": "x"}, "events[0].data.path"),
        ({"event_type": "command_run", "text": ""}, "events[0].data.command"),
        ({"event_type": "chat_turn", "text": "   "}, "events[0].text"),
        ({"event_type": "chat_turn", "text": "x", "ts": "2099-01-01T00:00:00Z"}, "events[0].ts"),
        (
            {"event_type": "handoff", "text": "x", "data": {"next_steps": "do it"}},
            "events[0].data.next_steps",
        ),
        (
            {"event_type": "command_run", "text": "make", "data": {"exit_code": "1"}},
            "events[0].data.exit_code",
        ),
        ({"event_type": "chat_turn", "text": "x", "importance": 2}, "events[0].importance"),
    ],
)
def test_bad_events_are_refused_field_by_field(api, space, event, field):
    session = start(api)
    response = api.post(f"{SESSIONS}{session['id']}/events/", {"events": [event]}, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    assert not SessionEvent.objects.filter(session_id=session["id"]).exists()


def test_a_batch_has_between_one_and_five_hundred_events(api, space):
    session = start(api)
    empty = api.post(f"{SESSIONS}{session['id']}/events/", {"events": []}, format="json")
    many = api.post(
        f"{SESSIONS}{session['id']}/events/",
        {"events": [{"event_type": "chat_turn", "text": "x"}] * 501},
        format="json",
    )

    assert empty.status_code == 400
    assert many.status_code == 400
    assert list(many.json()["error"]["fields"]) == ["events.non_field_errors"]


def test_event_text_data_and_references_are_redacted_sealed_and_audited(api, space):
    session = start(api)
    body = log(
        api,
        session["id"],
        ev(
            "s1",
            "command_run",
            0,
            "curl -H 'Authorization: Bearer sk_live_51HqTzQJkLmNoPqRsTuVwXyZ0123456789abcdefGHIJ'",
            data={"command": "deploy --notify jo.ramos@shop.example", "exit_code": 0},
            entities=["/home/jo.ramos@shop.example/app.py"],
        ),
    )

    stored = body["events"][0]["event"]
    assert stored["redaction"]["redacted"] is True
    paths = {r["path"] for r in stored["redaction"]["redactions"]}
    assert {"events[0].text", "events[0].data.command"} <= paths
    assert "sk_live" not in stored["text"]
    assert "jo.ramos@shop.example" not in stored["data"]["command"]
    assert "jo.ramos@shop.example" not in stored["entities"][0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT text, data, refs FROM prd_sessionevent WHERE session_id = %s", [session["id"]])
        text, data, refs = cursor.fetchone()
    assert b"curl" not in bytes(text)
    assert b"deploy" not in bytes(data)
    assert b"app.py" not in bytes(refs)
    assert (
        AuditEvent.objects.filter(
            action="create", target_type="agentsession", target_id=session["id"]
        ).count()
        == 2
    )


def test_the_event_log_is_append_only_in_the_database(api, space):
    session = start(api)
    log(api, session["id"], WORKDAY[0])

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        SessionEvent.objects.filter(session_id=session["id"]).update(sequence=7)


def test_roles_and_scoped_tokens_limit_sessions_as_they_limit_memories(api, space, user):
    session = start(api)
    viewer = member_client(space, "viewer", "sess-viewer")
    stranger = member_client(space, None, "sess-stranger")
    other_space_token = client_for(user, spaces=[SpaceFactory(slug="elsewhere", members={user: "owner"})])

    assert viewer.get(f"{SESSIONS}{session['id']}/").status_code == 200
    assert (
        viewer.post(f"{SESSIONS}{session['id']}/events/", {"events": [WORKDAY[0]]}, format="json").status_code
        == 403
    )
    assert viewer.post(SESSIONS, {"space": "webshop"}, format="json").status_code == 403
    # Not found, exactly like a session that does not exist.
    for client in (stranger, other_space_token):
        assert client.get(f"{SESSIONS}{session['id']}/").status_code == 404
        assert client.get(f"{SESSIONS}{session['id']}/handoff/").status_code == 404
        assert (
            client.post(
                f"{SESSIONS}{session['id']}/events/", {"events": [WORKDAY[0]]}, format="json"
            ).status_code
            == 404
        )
    assert stranger.get(f"{SESSIONS}ses_doesnotexist/").status_code == 404


@pytest.mark.parametrize("mode", ["paused", "off"])
def test_a_paused_or_off_space_refuses_events(api, space, mode):
    session = start(api)
    assert api.patch("/api/v1/spaces/webshop/", {"mode": mode}, format="json").status_code == 200

    response = api.post(f"{SESSIONS}{session['id']}/events/", {"events": [WORKDAY[0]]}, format="json")

    assert response.status_code == 409
    assert not SessionEvent.objects.exists()


def test_an_incognito_space_answers_but_keeps_nothing(api, space):
    session = start(api)
    assert api.patch("/api/v1/spaces/webshop/", {"mode": "incognito"}, format="json").status_code == 200

    body = log(api, session["id"], WORKDAY[0])

    assert body["created"] == 1
    assert not SessionEvent.objects.exists()
    assert AgentSession.objects.get(pk=session["id"]).event_count == 0


# --- cards ----------------------------------------------------------------------------


def _cards(session_id: str) -> dict[str, list[MemoryCard]]:
    found: dict[str, list[MemoryCard]] = {}
    for card in MemoryCard.objects.filter(session_id=session_id).select_related("memory").order_by("key"):
        found.setdefault(card.card_type, []).append(card)
    return found


def test_a_session_compiles_into_cards_that_cite_their_events(workday):
    cards = _cards(workday["id"])

    assert sorted(cards) == ["decision", "gotcha", "procedure", "task_state"]
    decision = cards["decision"][0]
    assert decision.memory.kind == "decision"
    assert decision.memory.memory_type == "semantic"
    assert "payments service" in decision.memory.content
    gotcha = cards["gotcha"][0]
    assert [e.event_id for e in gotcha.evidence.order_by("sequence")] == ["e4", "e5", "e6"]
    assert "test_partial_refund" in gotcha.memory.title
    assert "shop/refunds.py" in gotcha.memory.content
    procedure = cards["procedure"][0]
    assert procedure.memory.memory_type == "procedural"
    assert [e.event_id for e in procedure.evidence.order_by("sequence")] == ["e3", "e7"]
    assert cards["task_state"][0].memory.memory_type == "episodic"


def test_the_cards_of_one_session_are_linked_to_each_other(workday):
    from memories.models import MemoryRelation

    memories = {card.memory_id for cards in _cards(workday["id"]).values() for card in cards}
    edges = MemoryRelation.objects.filter(source_id__in=memories)

    # A chain through the session's memories: each linked once, to the next formed.
    assert edges.count() == len(memories) - 1
    assert {e.relation_type for e in edges} == {"RELATES_TO"}
    assert {e.target_id for e in edges} | {e.source_id for e in edges} == memories


def test_compiling_again_forms_nothing_twice(api, workday):
    before = MemoryCard.objects.count()
    response = api.post(f"{SESSIONS}{workday['id']}/compile/")

    assert response.status_code == 200
    assert response.json()["formed"] == 0
    assert MemoryCard.objects.count() == before


def test_the_card_api_shows_claim_evidence_and_validation(api, workday):
    listed = api.get(f"{CARDS}?space=webshop&card_type=gotcha").json()["results"]
    assert len(listed) == 1
    card = api.get(f"{CARDS}{listed[0]['id']}/").json()

    assert card["scope"]["project_id"] == "webshop"
    assert [e["ref"] for e in card["evidence"]] == ["e4", "e5", "e6"]
    assert card["validation"]["status"] == "unchecked"
    assert card["validations"] == []


def test_a_later_failure_of_a_procedures_command_fails_the_card(api, workday, on_commit):
    later = start(api, key="next-day")
    with on_commit():
        log(
            api,
            later["id"],
            ev(
                "n1",
                "command_run",
                60 * 24,
                "ImportError: no module stripe",
                data={"command": "pytest tests/refunds", "exit_code": 1},
            ),
        )

    procedure = MemoryCard.objects.get(session_id=workday["id"], card_type="procedure")
    assert procedure.status == "failed"
    check = CardValidation.objects.get(card=procedure)
    assert check.validator == "sam.rules.command_rerun"
    assert check.event.event_id == "n1"


def test_a_change_to_the_file_a_card_is_scoped_to_makes_it_stale(api, workday, on_commit):
    created = api.post(
        CARDS,
        {
            "space": "webshop",
            "card_type": "project_fact",
            "session": workday["id"],
            "claim": "Refund amounts are Decimal end to end",
            "evidence": ["e5"],
            "scope": {"path": "shop/refunds.py"},
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["evidence"][0]["ref"] == "e5"
    later = start(api, key="later")
    with on_commit():
        log(api, later["id"], ev("c1", "file_change", 90, data={"path": "shop/refunds.py"}))

    assert api.get(f"{CARDS}{created.json()['id']}/").json()["validation"]["status"] == "stale"


def test_a_card_must_cite_events_of_its_space(api, workday):
    response = api.post(
        CARDS,
        {"space": "webshop", "card_type": "gotcha", "claim": "x", "evidence": ["e1", "nope"]},
        format="json",
    )

    assert response.status_code == 400
    assert "evidence" in response.json()["error"]["fields"]


def test_anyone_who_may_write_can_check_a_card(api, workday, space):
    card = MemoryCard.objects.get(session_id=workday["id"], card_type="decision")
    viewer = member_client(space, "viewer", "card-viewer")

    refused = viewer.post(f"{CARDS}{card.id}/validations/", {"status": "failed"}, format="json")
    checked = api.post(
        f"{CARDS}{card.id}/validations/",
        {"status": "pass", "validator": "ci", "note": "payments owns Stripe", "event": "e2"},
        format="json",
    )

    assert refused.status_code == 403
    assert checked.status_code == 201, checked.content
    assert checked.json()["validation"]["status"] == "pass"
    assert checked.json()["validations"][0]["event"] == "e2"
    assert api.post(f"{CARDS}{card.id}/validations/", {"status": "maybe"}, format="json").status_code == 400


# --- handoffs -------------------------------------------------------------------------


def test_the_handoff_says_what_changed_shipped_failed_and_what_is_next_with_citations(api, workday):
    response = api.get(f"{SESSIONS}{workday['id']}/handoff/")

    assert response.status_code == 200
    handoff, markdown = response.json()["json"], response.json()["markdown"]
    assert handoff["what_changed"] == [
        {"path": "shop/refunds.py", "changes": 1, "events": ["e5"], "change": "modified"}
    ]
    shipped = {s["what"]: s["events"] for s in handoff["what_shipped"]}
    assert shipped["git push origin refunds"] == ["e8"]
    assert shipped["test `test_partial_refund` passes again"] == ["e4", "e6"]
    assert handoff["what_failed"] == []
    assert handoff["decisions"][0]["events"] == ["e2"]
    assert handoff["open_questions"] == [{"question": "Do partial refunds need approval?", "events": ["e9"]}]
    assert handoff["next_steps"] == [{"step": "Handle the refund.updated webhook", "events": ["e9"]}]
    assert handoff["generated_at"] == at(8)
    assert "## What shipped" in markdown
    assert "- Handle the refund.updated webhook [e9]" in markdown


def test_an_unfixed_failure_is_what_failed_and_becomes_the_next_step(api, space):
    session = start(api)
    log(
        api,
        session["id"],
        ev(
            "f1",
            "test_result",
            0,
            "E   KeyError: 'currency'",
            data={"name": "test_refund_currency", "status": "failed"},
        ),
    )

    handoff = api.get(f"{SESSIONS}{session['id']}/handoff/").json()["json"]

    assert handoff["what_failed"] == [
        {
            "kind": "test",
            "subject": "test_refund_currency",
            "events": ["f1"],
            "error": "E KeyError: 'currency'",
        }
    ]
    assert handoff["next_steps"][0]["step"] == "Fix the failing test `test_refund_currency`"


def test_the_next_session_gets_the_latest_handoff_in_one_call(api, workday):
    older = start(api, key="older")
    log(api, older["id"], {**WORKDAY[0], "ts": at(-600)})

    response = api.get(f"{SESSIONS}latest-handoff/?space=webshop")

    assert response.status_code == 200
    assert response.json()["json"]["session"]["id"] == workday["id"]
    assert api.get(f"{SESSIONS}latest-handoff/?space=nowhere").status_code == 404


def test_a_handoff_is_the_same_for_the_same_events(api, space):
    one, two = start(api, key="a"), start(api, key="b")
    log(api, one["id"], *WORKDAY)
    log(api, two["id"], *WORKDAY)

    first = api.get(f"{SESSIONS}{one['id']}/handoff/").json()
    second = api.get(f"{SESSIONS}{two['id']}/handoff/").json()

    first["json"].pop("session")
    second["json"].pop("session")
    assert first["json"] == second["json"]
    assert first["markdown"].replace(one["id"], "") == second["markdown"].replace(two["id"], "")


# --- context packs --------------------------------------------------------------------


def test_a_boot_pack_shows_tasks_decisions_changed_files_and_questions(api, workday):
    api.post(
        "/api/v1/prd/executions/",
        {"space": "webshop", "prd_ref": "docs/prd/refunds.md", "title": "Refunds"},
        format="json",
    )
    response = api.post(
        PACKS,
        {"spaces": ["webshop"], "pack_type": "boot", "token_budget": 2000, "as_of": at(60)},
        format="json",
    )

    assert response.status_code == 200, response.content
    pack, markdown = response.json()["json"], response.json()["markdown"]
    assert pack["pack_type"] == "boot"
    kinds = {t["kind"] for t in pack["active_tasks"]}
    assert "card" in kinds
    assert pack["recent_decisions"][0]["decision"].startswith("Refunds go through the payments service")
    assert [f["path"] for f in pack["changed_files"]] == ["shop/refunds.py"]
    assert "Do partial refunds need approval?" in [q.get("question") for q in pack["open_questions"]]
    assert pack["validation_report"]["failed"] == []
    assert pack["source_mix"]["files"] == 1
    assert {"id", "reason"} <= set(pack["inclusion_reason"][0])
    assert "## Active tasks" in markdown
    assert "## Changed files" in markdown
    assert pack["token_budget"]["used"] <= 2000


def test_failed_and_stale_cards_are_left_out_of_packs_unless_asked_for(api, workday, on_commit):
    later = start(api, key="broken")
    with on_commit():
        log(
            api,
            later["id"],
            ev("b1", "command_run", 120, "exit 2", data={"command": "pytest tests/refunds", "exit_code": 2}),
        )
    procedure = MemoryCard.objects.get(session_id=workday["id"], card_type="procedure")
    request = {
        "query": "how do I run the refund tests with pytest",
        "spaces": ["webshop"],
        "k": 20,
        "token_budget": 4000,
        "as_of": at(180),
    }

    default = api.post(PACKS, request, format="json").json()["json"]
    asked = api.post(PACKS, {**request, "include_unvalidated": True}, format="json").json()["json"]

    assert procedure.memory_id not in [i["id"] for i in default["items"]]
    assert procedure.memory_id in default["validation_report"]["excluded"]
    assert procedure.memory_id in default["validation_report"]["failed"]
    shown = {i["id"]: i for i in asked["items"]}
    assert procedure.memory_id in shown
    assert shown[procedure.memory_id]["card"]["status"] == "failed"


def test_a_card_past_its_ttl_is_stale_in_a_pack_as_of_then(api, workday):
    decision = MemoryCard.objects.get(session_id=workday["id"], card_type="decision")
    far = (decision.checked_at + timedelta(days=decision.ttl_days + 1)).isoformat()
    request = {
        "query": "refunds payments service Stripe",
        "spaces": ["webshop"],
        "k": 20,
        "token_budget": 4000,
    }

    now = api.post(PACKS, request, format="json").json()["json"]
    later = api.post(PACKS, {**request, "as_of": far}, format="json").json()["json"]

    assert decision.memory_id not in now["validation_report"]["stale"]
    assert decision.memory_id in later["validation_report"]["stale"]
    assert decision.memory_id not in [d["id"] for d in later["recent_decisions"]]


@pytest.mark.parametrize("budget", [60, 120, 250, 500, 900])
def test_session_sections_never_push_a_pack_over_its_budget(api, workday, budget):
    response = api.post(
        PACKS,
        {"spaces": ["webshop"], "pack_type": "boot", "token_budget": budget, "as_of": at(60)},
        format="json",
    )

    pack = response.json()["json"]
    from retrieval.tokens import count_tokens

    assert pack["token_budget"]["used"] <= budget
    assert count_tokens(response.json()["markdown"]) <= budget


def test_the_same_store_gives_the_same_boot_pack(api, workday):
    request = {"spaces": ["webshop"], "pack_type": "boot", "token_budget": 1500, "as_of": at(60)}

    first = api.post(PACKS, request, format="json").json()
    second = api.post(PACKS, request, format="json").json()

    assert first == second


def test_deleting_a_space_deletes_its_sessions_events_and_cards(api, workday):
    response = api.delete("/api/v1/spaces/webshop/")

    assert response.status_code == 200, response.content
    assert response.json()["deleted"]["session_events"] == len(WORKDAY)
    assert not AgentSession.objects.exists()
    assert not SessionEvent.objects.exists()
    assert not MemoryCard.objects.exists()


def test_a_session_whose_card_job_was_lost_is_compiled_by_the_sweep(api, space):
    from prd import tasks

    session = start(api)
    log(api, session["id"], *WORKDAY)  # no on_commit: the enqueued job is dropped
    assert not MemoryCard.objects.exists()

    assert tasks.prd_sweep()["sessions_compiled"] == 1
    assert MemoryCard.objects.filter(session_id=session["id"]).count() == 4
    assert AgentSession.objects.get(pk=session["id"]).cards_through == len(WORKDAY)
    assert tasks.prd_sweep()["sessions_compiled"] == 0


def test_the_demo_session_loads_once_and_compiles_into_cards(space, on_commit):
    from django.core.management import call_command

    with on_commit():
        call_command("sam_demo_session", stdout=open(os.devnull, "w"))  # noqa: SIM115
    call_command("sam_demo_session", stdout=open(os.devnull, "w"))  # noqa: SIM115

    session = AgentSession.objects.get(space=space, key="demo-refunds")
    assert session.event_count == 8
    assert sorted(MemoryCard.objects.filter(session=session).values_list("card_type", flat=True)) == [
        "decision", "gotcha", "procedure", "task_state"]
