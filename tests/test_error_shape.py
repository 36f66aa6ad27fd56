"""Every error on an /api/ path answers {"error": {"code", "message", "fields"}}; HTML is
for the admin only. Checked with DEBUG off (as served) and on (as `make run` serves)."""

from __future__ import annotations

import pytest
from django.urls import include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

SECRET = "connection string postgres://sam:hunter2@db"


class ExplodingView(APIView):
    """An API view with a bug: its exception must not reach the client."""

    permission_classes = ()

    def get(self, request: Request) -> Response:
        raise RuntimeError(SECRET)


# The project's URLs plus one broken view (used by the tests marked with this module).
urlpatterns = [
    path("api/v1/test-explodes/", ExplodingView.as_view()),
    path("", include("samsite.urls")),
]


def assert_error_shape(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert isinstance(body["error"]["fields"], dict)
    return body["error"]


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request, settings) -> bool:
    settings.DEBUG = request.param
    return request.param


def test_an_unknown_api_url_answers_404_json(api, debug):
    assert_error_shape(api.get("/api/v1/nope/"), 404, "not_found")
    assert_error_shape(api.post("/api/v1/nope/", {}, format="json"), 404, "not_found")


def test_an_unknown_api_url_answers_404_json_to_anonymous_callers(anon, debug):
    assert_error_shape(anon.get("/api/nope"), 404, "not_found")


def test_a_wrong_method_answers_405_json(api, debug):
    response = api.put("/api/v1/memories/", {}, format="json")
    assert_error_shape(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]


def test_a_malformed_json_body_answers_400_json(api, debug):
    response = api.post("/api/v1/memories/", '{"title": "broken', content_type="application/json")
    assert_error_shape(response, 400, "invalid")


def test_a_request_django_refuses_before_any_view_answers_400_json(api, debug):
    # An unknown Host header is refused by Django itself (SuspiciousOperation), not by DRF.
    response = api.get("/api/v1/memories/", HTTP_HOST="attacker.example")
    assert_error_shape(response, 400, "bad_request")


def test_a_missing_object_answers_404_json(api, debug):
    assert_error_shape(api.get("/api/v1/memories/does-not-exist/"), 404, "not_found")


@pytest.mark.urls(__name__)
def test_an_unhandled_exception_answers_500_json_without_details(db, debug, caplog):
    # Django re-raises view exceptions into tests unless told not to; a server does not.
    client = APIClient(raise_request_exception=False)

    response = client.get("/api/v1/test-explodes/", HTTP_X_REQUEST_ID="req-explodes-1")

    error = assert_error_shape(response, 500, "server_error")
    assert "hunter2" not in response.content.decode()
    assert "RuntimeError" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert response["X-Request-ID"] == "req-explodes-1"
    assert "X-Request-ID" in error["message"]
    # The detail goes to the log, where operators look for it.
    assert any(record.exc_info and record.exc_info[0] is RuntimeError for record in caplog.records)


def test_the_admin_keeps_html_errors(admin_client, db):
    response = admin_client.get("/admin/nope/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.fixture
def admin_client(client, db):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client
