"""Deeply nested or oversized JSON is refused with 400 in the API's error shape, never 5xx.

Bodies are written as raw JSON text: a 100,000-deep document cannot even be built by
Python's own json module without exhausting its recursion limit.
"""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from core.api.parsers import MAX_JSON_DEPTH
from memories.api.serializers import METADATA_BYTES_MAX, MemoryCreateInputSerializer
from memories.models import Memory
from prd.models import PRDEvent
from tests.prd.conftest import EXECUTIONS, started

MEMORIES = "/api/v1/memories/"
MEMORY_FIELDS = ('"space": "webshop", "title": "Deploys go through the release train", '
                 '"content": "Every production deploy goes through the Thursday release train."')


def nested_object(depth: int) -> str:
    """`{"a": {"a": ... 1 ...}}`, `depth` objects deep, as JSON text."""
    return '{"a": ' * depth + "1" + "}" * depth


def post_raw(api, url: str, text: str):
    return api.generic("POST", url, text, content_type="application/json")


def assert_invalid(response, fields: set[str]) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"]
    assert set(error["fields"]) == fields
    return error


def test_metadata_nested_600_deep_is_400_against_the_metadata_field(api, space):
    response = post_raw(api, MEMORIES, "{" + MEMORY_FIELDS + ', "metadata": ' + nested_object(600) + "}")

    error = assert_invalid(response, {"metadata"})
    assert f"{MAX_JSON_DEPTH} levels" in error["fields"]["metadata"][0]
    assert Memory.objects.count() == 0


def test_a_prd_event_detail_nested_600_deep_is_400_against_the_detail_field(api, space):
    execution = started(api)
    events_before = PRDEvent.objects.count()
    body = '{"type": "revision", "summary": "deep", "detail": ' + nested_object(600) + "}"

    response = post_raw(api, f"{EXECUTIONS}{execution['id']}/events/", body)

    assert_invalid(response, {"detail"})
    assert PRDEvent.objects.count() == events_before


@pytest.mark.parametrize("url", [MEMORIES, f"{EXECUTIONS}", "/api/v1/recall/"])
def test_a_body_nested_100k_deep_is_400(api, space, url):
    response = post_raw(api, url, "[" * 100_000 + "]" * 100_000)

    assert_invalid(response, {"non_field_errors"})


def test_a_body_at_the_depth_limit_is_parsed_and_one_level_more_is_not(api, space):
    # The body is level 1 and metadata level 2: metadata may nest MAX_JSON_DEPTH - 1 deep.
    at_limit = "{" + MEMORY_FIELDS + ', "metadata": ' + nested_object(MAX_JSON_DEPTH - 1) + "}"
    over = "{" + MEMORY_FIELDS + ', "metadata": ' + nested_object(MAX_JSON_DEPTH) + "}"

    assert post_raw(api, MEMORIES, at_limit).status_code == 201
    assert_invalid(post_raw(api, MEMORIES, over), {"metadata"})


def test_normal_nested_metadata_is_stored_as_sent(api, space):
    metadata = {"ticket": {"system": "jira", "keys": ["OPS-12", "OPS-19"], "links": [{"rel": "epic"}]}}

    response = post_raw(api, MEMORIES, "{" + MEMORY_FIELDS + ', "metadata": ' + json.dumps(metadata) + "}")

    assert response.status_code == 201, response.content
    assert response.json()["memory"]["metadata"] == metadata
    assert Memory.objects.get().metadata == metadata


def test_metadata_larger_than_its_limit_is_400_against_the_field(api, space):
    metadata = {"blob": "x" * METADATA_BYTES_MAX}

    response = post_raw(api, MEMORIES, "{" + MEMORY_FIELDS + ', "metadata": ' + json.dumps(metadata) + "}")

    error = assert_invalid(response, {"metadata"})
    assert str(METADATA_BYTES_MAX) in error["fields"]["metadata"][0]


def test_a_body_larger_than_the_limit_is_400_before_it_is_decoded(api, space):
    body = "{" + MEMORY_FIELDS + ', "metadata": {"note": "' + "x" * 2_000 + '"}}'

    with override_settings(SAM_API_MAX_BODY_BYTES=1_000):
        response = post_raw(api, MEMORIES, body)

    error = assert_invalid(response, {"non_field_errors"})
    assert "1000 bytes" in error["message"]


@pytest.mark.parametrize("text", ['{"space": NaN}', '{"space": "webshop",', b"\xff\xfe",
                                  '{"space": "webshop", "importance": 1e400}'])
def test_bodies_that_are_not_json_are_400(api, space, text):
    assert_invalid(post_raw(api, MEMORIES, text), {"non_field_errors"})


def test_a_form_encoded_body_is_refused_with_415(api, space):
    response = api.post(MEMORIES, {"space": "webshop", "title": "A form post"})

    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_the_metadata_field_bounds_depth_whatever_parsed_the_input():
    # Serializers also validate input that never went through the HTTP parser (bulk rows,
    # imports): the field checks depth on its own.
    metadata: dict = {}
    inner = metadata
    for _ in range(600):
        inner["a"] = {}
        inner = inner["a"]
    body = {"space": "webshop", "title": "Deep", "content": "Deep metadata.", "metadata": metadata}
    serializer = MemoryCreateInputSerializer(data=body)

    assert not serializer.is_valid()
    assert set(serializer.errors) == {"metadata"}
