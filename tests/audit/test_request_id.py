"""RequestIdMiddleware: every response carries an id, and audit events recorded meanwhile get it."""

from __future__ import annotations

import re

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from governance.access import SYSTEM
from governance.audit.middleware import RequestIdMiddleware
from governance.audit.models import AuditEvent
from governance.audit.request_id import current_request_id, request_id_bound
from governance.audit.services import audit_record

GENERATED = re.compile(r"[0-9a-f]{32}")


def test_a_response_without_an_offered_id_gets_a_new_one(anon, db):
    first = anon.get("/api/v1/spaces/")
    second = anon.get("/api/v1/spaces/")
    assert first.status_code == 401  # errors carry it too
    assert GENERATED.fullmatch(first["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_a_safe_offered_id_is_echoed(anon, db):
    response = anon.get("/api/v1/spaces/", HTTP_X_REQUEST_ID="agent-7:run.42_a")
    assert response["X-Request-ID"] == "agent-7:run.42_a"


@pytest.mark.parametrize("offered", ["x" * 65, "has space", "<script>", "-leading-dash", "semi;colon", ""])
def test_an_unsafe_offered_id_is_replaced(anon, db, offered):
    response = anon.get("/api/v1/spaces/", HTTP_X_REQUEST_ID=offered)
    assert GENERATED.fullmatch(response["X-Request-ID"])


def test_audit_events_recorded_during_a_request_carry_its_id(db):
    seen: dict[str, object] = {}

    def view(request):
        seen["event"] = audit_record("edit", actor=SYSTEM, target_type="memory", target_id="m")
        seen["on_request"] = request.request_id
        return HttpResponse("ok")

    response = RequestIdMiddleware(view)(RequestFactory().get("/", HTTP_X_REQUEST_ID="trace-1"))

    assert seen["event"].request_id == "trace-1" == seen["on_request"] == response["X-Request-ID"]
    assert current_request_id() is None  # unbound once the request is done


def test_an_api_write_is_audited_with_the_request_id(api, db):
    response = api.post("/api/v1/spaces/", {"slug": "audited", "name": "Audited"}, format="json",
                        HTTP_X_REQUEST_ID="create-audited-1")
    assert response.status_code == 201, response.content
    event = AuditEvent.objects.get(request_id="create-audited-1", action="create")
    assert (event.target_type, event.space_slug, event.actor_label) == ("space", "audited", "owner")


def test_a_bound_id_must_be_safe():
    with pytest.raises(ValueError, match="request id"), request_id_bound("two words"):
        pass
    with request_id_bound() as generated:
        assert current_request_id() == generated
    assert current_request_id() is None
