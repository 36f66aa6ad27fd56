from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from governance import pages as governance_pages
from samsite.health import healthz, readyz
from samsite.home import home
from samsite.mcp.http import mcp_endpoint
from samsite.metrics import metrics_view

urlpatterns = [
    # Staff to the admin, everyone else signed in to their My memory page (samsite/home.py).
    path("", home, name="home"),
    # Sign-in for every user: the admin's login is for staff only.
    path("sign-in/", auth_views.LoginView.as_view(template_name="me/sign_in.html",
                                                  redirect_authenticated_user=True), name="sign-in"),
    path("sign-out/", auth_views.LogoutView.as_view(), name="sign-out"),
    path("me/", include("memories.me.urls")),
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
