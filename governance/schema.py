"""OpenAPI description of SAM's token authentication (loaded by GovernanceConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "governance.authentication.ApiTokenAuthentication"
    name = "ApiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A SAM API token (`manage.py sam_token --user NAME`), as `Bearer sam_…`.",
        }
