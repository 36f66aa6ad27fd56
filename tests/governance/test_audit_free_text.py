"""Free text given with a restrict or a chain abandon never lands in the append-only audit log.

The log keeps a keyed fingerprint of such a reason (docs/audit.md, "Memory events"), so
neither the words nor the personal data in them outlive the memory or the chain.
"""

from __future__ import annotations

import json

from django.db import connection

from governance.audit import digests
from governance.audit.models import AuditEvent
from governance.roles import RANK, Role
from tests.factories import make_memory

EMAIL = "ana.lima@shop.example"
RESTRICT_CANARY = "velvetcassowary"
ABANDON_CANARY = "copperaxolotl"


def raw_audit_rows() -> str:
    """Every column of every audit row as the database holds it, as one lower-case text."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {AuditEvent._meta.db_table} ORDER BY id")
        rows = cursor.fetchall()
    return "\n".join(repr(row) for row in rows).lower()


def opened_payloads() -> str:
    """Every audit payload, opened with the cipher, as one lower-case text."""
    return json.dumps([event.payload_data for event in AuditEvent.objects.order_by("id")]).lower()


def timeline(api) -> str:
    response = api.get("/api/v1/spaces/webshop/timeline/?page_size=500")
    assert response.status_code == 200, response.content
    return response.content.decode().lower()


def assert_absent(*canaries: str, api) -> None:
    for where in (raw_audit_rows(), opened_payloads(), timeline(api)):
        for canary in canaries:
            assert canary not in where


def test_a_restrict_reason_is_kept_as_a_fingerprint_and_gone_with_the_memory(api, space, on_commit):
    with on_commit():
        memory = make_memory(space, title="Supplier contract terms")
    reason = f"Mentions {EMAIL}, see {RESTRICT_CANARY}"

    restricted = api.post(f"/api/v1/memories/{memory.pk}/restrict/",
                          {"restricted_to": "curator", "reason": reason}, format="json")
    assert restricted.status_code == 200, restricted.content

    event = AuditEvent.objects.get(action="restrict", target_id=memory.pk)
    payload = event.payload_data
    # The rank is a label and stays readable; the reason is a fingerprint.
    assert payload["after"] == {"visibility_rank": RANK[Role.CURATOR]}
    assert digests.is_fingerprint(payload["note"])
    assert_absent(RESTRICT_CANARY, EMAIL, api=api)

    with on_commit():
        assert api.delete(f"/api/v1/memories/{memory.pk}/").status_code == 204

    assert_absent(RESTRICT_CANARY, EMAIL, api=api)


def test_a_chain_abandon_reason_stays_on_the_chain_and_only_its_fingerprint_in_the_log(api, space):
    chain = api.post("/api/v1/thinking-chains/", {"space": "webshop", "query": "Retry payments how?"},
                     format="json").json()["id"]

    response = api.post(f"/api/v1/thinking-chains/{chain}/abandon/",
                        {"reason": f"{EMAIL} took it over, {ABANDON_CANARY}"}, format="json")

    assert response.status_code == 200, response.content
    # The chain itself shows its reason, redacted.
    assert ABANDON_CANARY in response.json()["abandon_reason"]
    assert EMAIL not in response.json()["abandon_reason"]
    closing = AuditEvent.objects.for_target("thinkingchain", chain).get(action="edit").payload_data
    assert closing["after"]["status"] == "abandoned"
    assert digests.is_fingerprint(closing["after"]["reason"])
    assert_absent(ABANDON_CANARY, EMAIL, api=api)
