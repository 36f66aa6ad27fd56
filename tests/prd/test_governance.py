"""The PRD app under governance: redaction, sealing at rest, audit, memory modes, and the
append-only log enforced by the database."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.crypto import cipher, rotation
from prd.models import PRDDecision, PRDEvent, PRDExecution, ThinkingChain

CHAINS = "/api/v1/thinking-chains/"


def _start(api) -> str:
    response = api.post("/api/v1/prd/executions/", {"space": "webshop", "prd_ref": "docs/prd/refunds.md",
                                                     "title": "Refunds"}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()["execution"]["id"] if "execution" in response.json() else response.json()["id"]


def test_event_text_is_redacted_sealed_and_audited(api, space):
    execution = _start(api)
    response = api.post(f"/api/v1/prd/executions/{execution}/events/", {
        "type": "blocker_hit", "requirement_id": "R1",
        "summary": "Stripe sandbox rejects our key; ask jo.ramos@shop.example for access",
        "detail": {"log": "token=sk_live_51HqTzQJkLmNoPqRsTuVwXyZ0123456789abcdefGHIJ"},
    }, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    kinds = {(r["path"], r["kind"]) for r in body["redaction_report"]}
    assert ("summary", "email") in kinds
    assert ("detail.log", "secret") in kinds
    event = PRDEvent.objects.get(pk=body["event"]["id"])
    assert "jo.ramos@shop.example" not in event.summary
    assert "sk_live" not in str(event.detail)
    with connection.cursor() as cursor:
        cursor.execute("SELECT summary, detail FROM prd_prdevent WHERE id = %s", [event.pk])
        summary, detail = cursor.fetchone()
    assert b"Stripe" not in bytes(summary)
    assert b"token" not in bytes(detail)
    assert AuditEvent.objects.filter(action="create", target_type="prdevent", target_id=event.pk).exists()


def test_decisions_are_sealed(api, space):
    execution = _start(api)
    response = api.post(f"/api/v1/prd/executions/{execution}/decisions/", {
        "decision": "Use idempotency keys for refund retries", "reason": "Stripe retries webhooks",
        "alternatives": ["Dedupe by amount"],
    }, format="json")
    assert response.status_code == 201, response.content
    decision = PRDDecision.objects.get()
    assert decision.alternatives == ["Dedupe by amount"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT decision, reason, alternatives FROM prd_prddecision")
        row = cursor.fetchone()
    assert all(b"Stripe" not in bytes(v) and b"Dedupe" not in bytes(v) for v in row)


def test_a_paused_space_refuses_prd_writes(api, space):
    execution = _start(api)
    space_services.space_update(actor=SYSTEM, slug="webshop", changes={"mode": "paused"})
    response = api.post(f"/api/v1/prd/executions/{execution}/events/", {
        "type": "requirement_started", "requirement_id": "R1", "summary": "Start the refunds API"},
        format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "mode_refuses_writes"
    assert PRDEvent.objects.count() == 0


def test_thinking_chain_text_is_sealed_and_still_found(api, space):
    started = api.post("/api/v1/thinking-chains/", {"space": "webshop",
                                               "query": "Why do refund webhooks arrive twice?"},
                       format="json")
    assert started.status_code == 201, started.content
    chain = started.json()["id"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT query, search_vector::text FROM prd_thinkingchain WHERE id = %s", [chain])
        query, vector = cursor.fetchone()
    assert b"webhook" not in bytes(query)
    assert "webhook" not in vector


def _chain(api, *thoughts: str) -> str:
    chain = api.post(CHAINS, {"space": "webshop", "query": "Retry payments how?"}, format="json").json()["id"]
    for content in thoughts:
        assert api.post(f"{CHAINS}{chain}/thoughts/", {"content": content}, format="json").status_code == 201
    return chain


def test_completing_and_abandoning_chains_are_audited(api, space, on_commit):
    done, dropped = _chain(api, "Retry network errors only"), _chain(api)

    with on_commit():
        assert api.post(f"{CHAINS}{done}/complete/").status_code == 200
    abandoned = api.post(f"{CHAINS}{dropped}/abandon/", {"reason": "wrong question"}, format="json")
    assert abandoned.status_code == 200

    def closing(chain_id: str) -> dict:
        rows = AuditEvent.objects.for_target("thinkingchain", chain_id).filter(action="edit")
        payloads = [row.payload_data for row in rows]
        return next(p for p in payloads if p.get("after", {}).get("status"))

    completed = closing(done)
    assert (completed["before"], completed["after"]) == ({"status": "active"}, {"status": "completed"})
    abandoned = closing(dropped)
    # The reason is free text: the append-only log keeps only its fingerprint.
    assert abandoned["after"]["status"] == "abandoned"
    assert set(abandoned["after"]["reason"]) == {"digest", "length"}


def test_a_paused_space_refuses_completing_and_abandoning_chains(api, space):
    chain = _chain(api, "Retry network errors only")
    space_services.space_update(actor=SYSTEM, slug="webshop", changes={"mode": "paused"})
    before = AuditEvent.objects.count()

    for response in (api.post(f"{CHAINS}{chain}/complete/"),
                     api.post(f"{CHAINS}{chain}/abandon/", {"reason": "later"}, format="json")):
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "mode_refuses_writes"
    assert ThinkingChain.objects.get(pk=chain).status == "active"
    assert AuditEvent.objects.count() == before


def test_an_incognito_caller_abandons_a_chain_without_a_trace(api, space):
    chain = _chain(api)
    assert api.put("/api/v1/me/mode/", {"mode": "incognito"}, format="json").status_code == 200

    response = api.post(f"{CHAINS}{chain}/abandon/", {"reason": "never mind"}, format="json")

    assert response.status_code == 200
    assert response.json()["status"] == "abandoned"
    assert ThinkingChain.objects.get(pk=chain).status == "active"


def test_chain_texts_are_redacted_and_reported(api, space):
    started = api.post(CHAINS, {"space": "webshop",
                                "query": "Why does jo.ramos@shop.example get two refunds?"}, format="json")
    assert [(r["path"], r["kind"]) for r in started.json()["redaction_report"]] == [("query", "email")]
    chain = started.json()["id"]
    thought = api.post(f"{CHAINS}{chain}/thoughts/", {"content": "Call +1 415 555 0132 to ask"},
                       format="json")
    assert [r["path"] for r in thought.json()["redaction_report"]] == ["content"]

    response = api.post(f"{CHAINS}{chain}/abandon/", {"reason": "ana.lima@shop.example took it over"},
                        format="json")

    assert response.status_code == 200
    assert [(r["path"], r["kind"]) for r in response.json()["redaction_report"]] == [("reason", "email")]
    stored = ThinkingChain.objects.get(pk=chain)
    assert "ana.lima" not in stored.abandon_reason
    assert response.json()["abandon_reason"] == stored.abandon_reason


# --- the append-only log in the database ------------------------------------------------

def _logged(api) -> tuple[PRDEvent, PRDDecision]:
    execution = _start(api)
    api.post(f"/api/v1/prd/executions/{execution}/decisions/", {
        "decision": "Use idempotency keys for refund retries", "reason": "Stripe retries webhooks"},
        format="json")
    decision = PRDDecision.objects.select_related("event").get()
    return decision.event, decision


@pytest.mark.parametrize(("table", "assignment"), [
    ("prd_prdevent", "type = 'rollback'"),
    ("prd_prdevent", "sequence = 7"),
    ("prd_prdevent", "requirement_id = 'R9'"),
    ("prd_prdevent", "created_at = now() - interval '1 day'"),
    ("prd_prdevent", "resolves_id = id"),
    ("prd_prddecision", "requirement_id = 'R9'"),
    ("prd_prddecision", "event_id = event_id || 'x'"),
])
def test_the_database_refuses_to_rewrite_the_log(api, space, table, assignment):
    event, decision = _logged(api)
    row = event.pk if table == "prd_prdevent" else decision.pk

    with (pytest.raises(DatabaseError, match="append-only"), transaction.atomic(),
          connection.cursor() as cursor):
        cursor.execute(f"UPDATE {table} SET {assignment} WHERE id = %s", [row])

    stored = PRDEvent.objects.get(pk=event.pk)
    assert (stored.type, stored.sequence, stored.requirement_id) == ("decision_made", 1, "")
    assert PRDDecision.objects.get(pk=decision.pk).event_id == event.pk


def test_key_rotation_still_reseals_the_log_and_deleting_the_execution_removes_it(api, space):
    event, decision = _logged(api)
    new_key = rotation.rotate_data_key(space.pk)

    report = rotation.reencrypt()

    assert report.rows["prd.PRDEvent"] == 1
    assert report.rows["prd.PRDDecision"] == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT e.summary, d.reason FROM prd_prdevent e "
                       "JOIN prd_prddecision d ON d.event_id = e.id")
        summary, reason = cursor.fetchone()
    assert cipher.key_id_of(bytes(summary)) == cipher.key_id_of(bytes(reason)) == new_key
    assert PRDDecision.objects.get(pk=decision.pk).reason == "Stripe retries webhooks"

    PRDExecution.objects.filter(pk=event.execution_id).delete()
    assert not PRDEvent.objects.exists()
    assert not PRDDecision.objects.exists()
