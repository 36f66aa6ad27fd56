"""The timelines are in the OpenAPI schema, paginated, with their filters."""

from drf_spectacular.generators import SchemaGenerator


def test_the_timelines_are_documented_as_paginated_lists_with_filters(db):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path in ("/api/v1/memories/{id}/timeline/", "/api/v1/spaces/{slug}/timeline/"):
        operation = schema["paths"][path]["get"]
        names = {p["name"] for p in operation["parameters"]}
        assert {"action", "after", "before", "page", "page_size"} <= names, path
        body = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert body["$ref"].endswith("/PaginatedTimelineItemOutputList")
