"""The API answers every request the way its published OpenAPI schema says.

Schemathesis generates requests from the schema drf-spectacular publishes (valid ones and
deliberately invalid ones) and sends them to the Django app in-process, authenticated with
the API token of a user who owns a space. Every built-in check is on: no 5xx, status codes,
content types, headers and bodies as documented, invalid data rejected, valid data accepted.
A client generated from the schema relies on exactly these promises.

The run is bounded and deterministic (few examples per operation, derandomized), so it
takes a minute or two and fails the same way on every machine. It is marked `schema_fuzz`
and runs with the rest of the suite (`make test`); `-m "not schema_fuzz"` skips it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

from governance.services import api_token_issue
from memories.normalize import clean_line
from tests.factories import SpaceFactory, UserFactory

# Examples per operation: enough to reach each serializer's edges, few enough that the
# 49 operations run in about a minute and a half on two cores (embedding runs inline).
MAX_EXAMPLES = 10


@pytest.fixture(autouse=True)
def _keep_test_connection_open() -> Iterator[None]:
    """Django closes "obsolete" connections at request start and end; inside the test's
    transaction that would close the test's own connection. Django's test client
    disconnects the same receiver for the same reason."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def owner_auth(db) -> dict[str, str]:
    """The Authorization header of a user who owns a space."""
    owner = UserFactory(username="fuzz-owner")
    SpaceFactory(slug="fuzzed", name="Fuzzed", members={owner: "owner"})
    _, raw_token = api_token_issue(user=owner, name="schema fuzz")
    return {"Authorization": f"Bearer {raw_token}"}


# The schema exactly as SAM publishes it at /api/schema/, bound to the in-process app.
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
schema.app = WSGIHandler()


def respect_cross_field_rules(case) -> None:
    """Make a schema-valid request also obey what no schema can say.

    OpenAPI 3.0 describes each field alone. Rules that tie two fields together, and ids
    that must name an existing object, are beyond it; the server answers 400 or 404 when
    they are broken and names the field. Only valid (positive) cases are adjusted; invalid
    ones are sent as generated.
    """
    path = case.operation.path
    if path in ("/api/v1/recall/", "/api/v1/context-packs/") and not isinstance(case.body, dict):
        case.body = {}  # the body is optional as a whole, but recall needs one of its fields
    body = case.body if isinstance(case.body, dict) else {}
    # Writes go to the space the user owns, so they get past "no such space" to the checks
    # that matter (another space's slug is a valid string the schema cannot rule out).
    for target in [body, *(body.get("items") or [])]:
        if isinstance(target, dict) and isinstance(target.get("space"), str):
            target["space"] = "fuzzed"
    # A time range: `before` must be later than `after` (recall filters, audit timelines).
    for window in (body.get("filters"), case.query):
        if isinstance(window, dict) and window.get("after") is not None and window.get("before") is not None:
            del window["before"]
    if path in ("/api/v1/recall/", "/api/v1/context-packs/") and not any(
            body.get(name) for name in ("query", "current_conversation", "active_task", "ui_state")):
        body["query"] = "release process"  # recall needs something to recall from
    # References to other objects: a random id names nothing (404 or 400 against the field).
    for target in [body, *(body.get("items") or [])]:
        if isinstance(target, dict):
            target.pop("superseded_by", None)
    if path == "/api/v1/thinking-chains/":
        body.pop("execution", None)
    if body.get("prd_content") and body.get("prd_hash"):
        del body["prd_hash"]  # the hash of prd_content, or a hash instead of it: not both
    if isinstance(body.get("requirements"), list):
        # Each requirement id once, as SAM compares them (whitespace folded); JSON Schema's
        # uniqueItems compares whole items, not one property of them.
        seen: set = set()
        body["requirements"] = [r for r in body["requirements"] if not (
            isinstance(r, dict) and isinstance(r.get("id"), str)
            and (clean_line(r["id"]) in seen or seen.add(clean_line(r["id"]))))]
    if body.get("query_type") == "topic" and not body.get("topic"):
        body["topic"] = "testing"  # a topic recall names its topic
    if path.endswith("/merge/") and isinstance(body.get("sources"), list):
        # A memory is not merged into itself.
        body["sources"] = [source for source in body["sources"] if source != case.path_parameters["id"]]
        body["sources"] = body["sources"] or ["mem_some_other_one"]
    if path.endswith("/resolve-conflict/") and body.get("other") == case.path_parameters["id"]:
        body["other"] = f"{body['other']}_other"  # a memory does not conflict with itself
    if path.endswith("/events/") and body.get("type") != "blocker_resolved":
        body.pop("resolves", None)  # only a blocker_resolved event names the blocker it resolves
    if path == "/api/v1/sessions/{id}/events/":
        for index, event in enumerate(body.get("events") or []):
            if isinstance(event, dict):
                typed_session_event(event, index)
    if path == "/api/v1/me/tokens/":
        # A token for the user's own space, with a name, read among its scopes, and an
        # expiry (if any) in the future: the rules of issuing that no schema can state.
        if body.get("spaces") is not None:
            body["spaces"] = ["fuzzed"]
        if not str(body.get("name") or "").strip():
            body["name"] = "fuzzed token"
        if isinstance(body.get("scopes"), list):
            body["scopes"] = sorted({*body["scopes"], "read"})
        body.pop("expires_at", None)
    if path == "/api/v1/cards/":
        # A card cites events and a session of its space; random ids name none.
        body.pop("session", None)
        body["evidence"] = []


# What each session event type needs in `data` (docs/sessions.md, "Events"): typed fields
# the schema leaves to one free-form object.
TYPED_DATA = {"command_run": {"command": "make test", "exit_code": 0},
              "file_change": {"path": "shop/cart.py", "change": "modified"},
              "test_result": {"name": "test_cart", "status": "passed"}}


def typed_session_event(event: dict, index: int) -> None:
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    for key in ("next_steps", "open_questions", "command", "exit_code", "path", "change", "name", "status",
                "decision"):
        data.pop(key, None)
    event["data"] = {**data, **TYPED_DATA.get(event.get("event_type", ""), {})}
    if not str(event.get("text") or "").strip():
        event["text"] = "Something happened"  # most types are their text
    event["event_id"] = f"fuzz-{index}"  # one id per event of the batch
    event.pop("ts", None)  # at most a day ahead of the server's clock


@pytest.mark.schema_fuzz
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_api_answers_as_its_schema_documents(case, owner_auth: dict[str, str]) -> None:
    if case.meta.generation.mode.is_positive:
        respect_cross_field_rules(case)
    excluded = []
    if case.operation.path == "/api/v1/memories/bulk/":
        # By design a bulk write that is not atomic answers 200 with an error per bad row,
        # so rows that break the create schema are reported, not refused: the one check
        # that cannot hold here.
        excluded.append(schemathesis.checks.negative_data_rejection)
    case.call_and_validate(headers=owner_auth, excluded_checks=excluded)
