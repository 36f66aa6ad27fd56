from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from governance import pages as governance_pages
from samsite.health import healthz, readyz
from samsite.mcp.http import mcp_endpoint
from samsite.metrics import metrics_view

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    # Liveness and readiness probes: JSON, no login (samsite/health.py).
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    # The space pages moved with the Space model (docs/architecture.md); old links still work.
    re_path(r"^admin/memories/space/(?P<rest>.*)$",
            RedirectView.as_view(url="/admin/core/space/%(rest)s", permanent=True, query_string=True)),
    path("admin/", admin.site.urls),
    # Pages for every signed-in person (templates/me/).
    path("me/tokens/", governance_pages.my_tokens, name="me-tokens"),
    path("me/tokens/<int:pk>/revoke/", governance_pages.my_token_revoke, name="me-token-revoke"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    # The MCP server over streamable HTTP (samsite/mcp); with and without the slash, as
    # MCP clients are configured either way and a POST cannot follow a redirect.
    path("mcp", mcp_endpoint, name="mcp"),
    path("mcp/", mcp_endpoint),
    path("api/v1/", include("memories.api.urls")),
    path("api/v1/", include("retrieval.api.urls")),
    path("api/v1/", include("prd.api.urls")),
    path("api/v1/", include("governance.audit.api.urls")),
    path("api/v1/", include("governance.api.urls")),
]
