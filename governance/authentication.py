"""DRF authentication by SAM API token: `Authorization: Bearer sam_…` (or `Token sam_…`).

A token's scopes (governance.scopes) are enforced here too, as it authenticates: every DRF
view authenticates before it runs, whatever permission classes it declares, and MCP tools
reach SAM through the same views, so this is the one place that holds them all.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from rest_framework import authentication, exceptions

from governance import policy, scopes
from governance.models import ApiToken, RightsGeneration, UserMemorySettings, hash_token

# Recording every request's time would turn each read into a write; a minute's
# precision is plenty to tell live tokens from forgotten ones.
LAST_USED_PRECISION = timedelta(minutes=1)


# A request made in-process on behalf of a request that has just authenticated this same
# header (an MCP tool's REST call, samsite.mcp.dispatch) carries that result in its WSGI
# environ under this key, which no HTTP header can set (headers arrive as HTTP_*): the token
# is then not looked up a second time within one request.
AUTHENTICATED_KEY = "sam.authenticated"


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request)
        known = request.META.get(AUTHENTICATED_KEY)
        found = known[1] if known is not None and known[0] == header else authenticate_header(header)
        if found is not None:
            _within_scopes(found[1], request)
        return found

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="sam"'


def _within_scopes(token: ApiToken, request) -> None:
    """Refuse (403, code `insufficient_scope`) a request the token's scopes do not cover."""
    view = (getattr(request, "parser_context", None) or {}).get("view")
    reason = scopes.refusal(token.scopes, request.method, view)
    if reason is not None:
        raise exceptions.PermissionDenied(reason, code="insufficient_scope")


def authenticate_header(value: bytes) -> tuple[User, ApiToken] | None:
    """(user, token) for an Authorization header holding a usable SAM token; None when the
    header names another scheme (or none). Raises AuthenticationFailed for a bad token.

    The REST API and the MCP endpoint both authenticate through here."""
    header = value.split()
    if not header or header[0].decode(errors="replace").lower() not in ApiTokenAuthentication.keywords:
        return None
    if len(header) != 2:
        raise exceptions.AuthenticationFailed("Malformed Authorization header.")
    raw = header[1].decode(errors="replace")
    token = (
        ApiToken.objects.usable().select_related("user")
        .filter(key_hash=hash_token(raw))
        # Read in the same statement, so a request costs no more queries for them: the
        # rights generation, under which access.rights() may answer from what this process
        # has kept, and the user's own memory mode (governance.policy).
        .annotate(rights_generation=Subquery(RightsGeneration.objects.filter(pk=1).values("value")[:1]),
                  user_mode=Subquery(UserMemorySettings.objects.filter(user_id=OuterRef("user_id"))
                                     .values("mode")[:1]))
        .first()
    )
    if token is None or not token.user.is_active:
        raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    user = token.user
    policy.remember_user_mode(user, token.user_mode)  # type: ignore[attr-defined]  # annotated above
    # The access gateway narrows the user's rights to the token's spaces and role.
    user.sam_token = token  # type: ignore[attr-defined]
    return user, token
