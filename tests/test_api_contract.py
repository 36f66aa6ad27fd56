"""The server accepts what the published schema allows and refuses what it does not.

Each case here was a disagreement between the API and its OpenAPI schema: a value of the
wrong JSON type coerced, a date-time the schema's format refuses taken, an empty or
non-numeric query value ignored.
"""

from __future__ import annotations

import re

import pytest

from core.models import Space

MEMORIES = "/api/v1/memories/"


def assert_400_on(response, field: str) -> None:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"], error


@pytest.mark.parametrize(("field", "wrong", "right", "error_at"), [
    ("name", 5, "Five", "name"),
    ("description", 1.5, "One and a half", "description"),
    ("retention_days", "7", 7, "retention_days"),
    ("redaction_allowlist", [1], ["dana"], "redaction_allowlist[0]"),
])
def test_a_value_of_the_wrong_json_type_is_refused_not_coerced(api, db, field, wrong, right, error_at):
    response = api.post("/api/v1/spaces/", {"slug": "typed", "name": "Typed", field: wrong}, format="json")

    assert_400_on(response, error_at)
    assert not Space.objects.filter(slug="typed").exists()
    # The same value with the documented type is taken.
    response = api.post("/api/v1/spaces/", {"slug": "typed", "name": "Typed", field: right}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()[field] == right


@pytest.mark.parametrize("value", ["2026-01-31", "2026-01-31T09:30:00", "2026-01-31 09:30:00Z"])
def test_a_date_time_that_is_not_rfc3339_is_refused(api, space, value):
    assert_400_on(api.get(MEMORIES, {"updated_after": value}), "updated_after")


def test_any_rfc3339_date_time_is_accepted_leap_seconds_and_nanoseconds_included(api, space):
    for value in ("2026-01-31T09:30:00Z", "2026-01-31t09:30:00.123456789+01:00", "2016-12-31T23:59:60Z"):
        assert api.get(MEMORIES, {"updated_after": value}).status_code == 200, value


@pytest.mark.parametrize("query", [{"memory_type": ""}, {"archived": ""}, {"text": ""}])
def test_an_empty_query_value_is_refused_not_ignored(api, space, query):
    assert_400_on(api.get(MEMORIES, query), next(iter(query)))


def test_a_page_size_must_be_a_positive_integer_and_is_cut_to_the_cap(api, space):
    assert_400_on(api.get(MEMORIES, {"page_size": "many"}), "page_size")
    assert_400_on(api.get(MEMORIES, {"page_size": "0"}), "page_size")
    assert api.get(MEMORIES, {"page_size": "100000"}).status_code == 200


def test_date_times_inside_stored_json_are_answered_as_rfc3339(api, space):
    example = {"user": "How do we deploy?", "assistant": "Through the Thursday release train.",
               "last_tested_at": "2026-01-31T09:30:00+00:00"}
    body = {"space": "webshop", "title": "Deploys go through the release train",
            "content": "Every production deploy goes through the Thursday release train.",
            "training_examples": [example]}

    response = api.post(MEMORIES, body, format="json")

    assert response.status_code == 201, response.content
    tested_at = response.json()["memory"]["training_examples"][0]["last_tested_at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", tested_at), tested_at
