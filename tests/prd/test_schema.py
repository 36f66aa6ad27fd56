"""The OpenAPI schema documents every PRD and thinking-chain endpoint."""

from drf_spectacular.generators import SchemaGenerator


def test_the_schema_lists_the_prd_and_chain_endpoints(db):
    paths = set(SchemaGenerator().get_schema(request=None, public=True)["paths"])
    assert {
        "/api/v1/prd/executions/", "/api/v1/prd/executions/{id}/", "/api/v1/prd/executions/{id}/context/",
        "/api/v1/prd/executions/{id}/events/", "/api/v1/prd/executions/{id}/decisions/",
        "/api/v1/prd/executions/{id}/status/", "/api/v1/thinking-chains/", "/api/v1/thinking-chains/{id}/",
        "/api/v1/thinking-chains/{id}/thoughts/", "/api/v1/thinking-chains/{id}/complete/",
        "/api/v1/thinking-chains/{id}/abandon/", "/api/v1/thinking-chains/recall/",
    } <= paths
