"""The OpenAPI schema generates without warnings and documents every endpoint."""

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
