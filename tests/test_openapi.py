"""The OpenAPI schema generates without warnings and documents every endpoint."""

import re

from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema


def test_schema_generates_with_no_warnings_or_errors(db):
    GENERATOR_STATS.reset()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    assert GENERATOR_STATS._warn_cache == {}
    assert GENERATOR_STATS._error_cache == {}
    paths = set(schema["paths"])
    assert {
        "/api/v1/memories/", "/api/v1/memories/{id}/", "/api/v1/memories/{id}/archive/",
        "/api/v1/memories/{id}/restore/", "/api/v1/memories/{id}/versions/",
        "/api/v1/memories/{id}/versions/{version}/",
        "/api/v1/memories/{id}/versions/{version}/restore/", "/api/v1/memories/bulk/",
        "/api/v1/spaces/", "/api/v1/spaces/{slug}/",
    } <= paths


def test_docs_pages_are_served(client, db):
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


PAGINATED_LISTS = {
    "/api/v1/memories/": "MemoryOutput", "/api/v1/spaces/": "SpaceOutput",
    "/api/v1/prd/executions/": "PRDExecutionOutput",
    "/api/v1/prd/executions/{id}/events/": "PRDEventOutput",
    "/api/v1/prd/executions/{id}/decisions/": "PRDDecisionOutput",
    "/api/v1/thinking-chains/": "ThinkingChainOutput",
    "/api/v1/memories/{id}/versions/": "MemoryVersionOutput",
    "/api/v1/spaces/{slug}/members/": "MembershipOutput",
    "/api/v1/spaces/{slug}/restricted-tags/": "RestrictedTag",
    "/api/v1/spaces/{slug}/categories/": "CategoryOutput",
    "/api/v1/me/memories/": "MyMemoryOutput",
}


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_every_paginated_list_documents_the_envelope_and_its_parameters(db):
    schema = _schema()
    for path, item in PAGINATED_LISTS.items():
        operation = schema["paths"][path]["get"]
        ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        envelope = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert set(envelope["properties"]) == {"count", "next", "previous", "results"}, path
        assert envelope["properties"]["results"]["items"]["$ref"].endswith(f"/{item}"), path
        parameters = {p["name"]: p["schema"] for p in operation["parameters"]}
        assert parameters["page"] == {"type": "integer", "minimum": 1}, path
        assert parameters["page_size"] == {"type": "integer", "minimum": 1}, path
        assert "404" in operation["responses"], path
    # Every list answers the envelope, as the README says: no GET answers a bare array.
    bare = [path for path, operations in schema["paths"].items()
            if operations.get("get", {}).get("responses", {}).get("200", {}).get("content", {})
            .get("application/json", {}).get("schema", {}).get("type") == "array"]
    assert bare == []


def test_conflicts_and_incognito_answers_are_documented_with_the_error_body(db):
    schema = _schema()
    paths = schema["paths"]
    error_ref = "#/components/schemas/ErrorOutput"
    conflicts = [paths["/api/v1/spaces/"]["post"], paths["/api/v1/memories/"]["post"],
                 paths["/api/v1/memories/{id}/"]["patch"], paths["/api/v1/memories/{id}/archive/"]["post"],
                 paths["/api/v1/prd/executions/{id}/events/"]["post"]]
    for operation in conflicts:
        assert operation["responses"]["409"]["content"]["application/json"]["schema"]["$ref"] == error_ref
        assert operation["responses"]["400"]["content"]["application/json"]["schema"]["$ref"] == error_ref
    assert "200" in paths["/api/v1/memories/"]["post"]["responses"]  # incognito: nothing kept
    error = schema["components"]["schemas"]["ErrorDetail"]
    assert {"code", "message", "fields"} <= set(error["required"])


UPLOAD = ("post", "/api/v1/spaces/{slug}/chat-imports/")


def test_request_bodies_are_json_only_and_memory_edits_require_a_version(db):
    schema = _schema()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if "requestBody" in operation:
                # One upload takes a file (a chat history); every other body is JSON.
                expected = {"multipart/form-data"} if (method, path) == UPLOAD else {"application/json"}
                assert set(operation["requestBody"]["content"]) == expected, (method, path)
    assert "version" in schema["components"]["schemas"]["MemoryUpdateInputRequest"]["required"]


def test_closed_vocabularies_are_in_the_schema_not_only_in_the_server(db):
    schema = _schema()
    timeline = schema["paths"]["/api/v1/spaces/{slug}/timeline/"]["get"]
    action = next(p for p in timeline["parameters"] if p["name"] == "action")["schema"]
    assert re.fullmatch(action["pattern"].strip("^$"), "create, edit")
    assert not re.fullmatch(action["pattern"].strip("^$"), "create,teleport")
    weights = schema["components"]["schemas"]["RecallInputRequest"]["properties"]["weights"]
    assert weights["additionalProperties"] is False
    assert "semantic" in weights["properties"]
    # Text a server refuses (NUL, or only whitespace where blank is refused) fails the pattern.
    title = schema["components"]["schemas"]["MemoryCreateInputRequest"]["properties"]["title"]
    assert re.search(title["pattern"].replace("\\u0000", "\\x00"), "Deploys")
    assert not re.search(title["pattern"].replace("\\u0000", "\\x00"), "   ")
    assert not re.search(title["pattern"].replace("\\u0000", "\\x00"), "a\x00b")


def test_memory_bodies_state_the_entry_limits_the_service_enforces(db):
    from memories import limits

    body = _schema()["components"]["schemas"]["MemoryCreateInputRequest"]["properties"]
    assert body["title"]["maxLength"] == limits.TITLE[1]
    assert body["content"]["maxLength"] == limits.CONTENT[1]
    assert body["summary"]["oneOf"][0]["maxLength"] == limits.SUMMARY[1]  # or empty: suggested
    assert body["tags"]["maxItems"] == limits.TAGS_COUNT[1]
    assert body["tags"]["items"]["oneOf"][0]["maxLength"] == limits.TAG[1]
    assert body["canonical_phrases"]["maxItems"] == limits.PHRASES_COUNT[1]
    assert body["training_examples"]["maxItems"] == limits.TRAINING_EXAMPLES_MAX
    # Minimums count visible characters: whitespace is folded before SAM measures.
    title = re.compile(body["title"]["pattern"])
    assert title.search("Abc")
    assert not title.search("A  b ")
    assert "fact" in _schema()["components"]["schemas"]["MemoryKindEnum"]["enum"]
