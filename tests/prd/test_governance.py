"""The PRD app under governance: redaction, sealing at rest, audit, memory modes."""

from __future__ import annotations

from django.db import connection

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from memories import services as memory_services
from prd.models import PRDDecision, PRDEvent


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
    memory_services.space_update(actor=SYSTEM, slug="webshop", changes={"mode": "paused"})
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
