""""My tokens" (`/me/tokens/`): a signed-in person lists, issues and revokes their own API
tokens, on plain server-rendered forms (no script needed). The rules are governance.tokens'.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from core.errors import NotFound
from governance import tokens
from governance.forms import TokenIssueForm


@login_required
@require_http_methods(["GET", "POST"])
def my_tokens(request: HttpRequest) -> HttpResponse:
    """The list and the issue form; a POST that issues answers with the secret, shown once."""
    form = TokenIssueForm(request.POST or None, user=request.user)  # type: ignore[arg-type]
    issued = form.issue() if request.method == "POST" and form.is_valid() else None
    if issued is not None:
        form = TokenIssueForm(user=request.user)  # type: ignore[arg-type]  # a fresh form for the next
    response = TemplateResponse(request, "me/tokens.html", {
        "title": "My tokens", "form": form, "tokens": tokens.own_tokens(actor=request.user),
        "token": issued[0] if issued else None, "secret": issued[1] if issued else None,
    }, status=400 if request.method == "POST" and issued is None else 200)
    # The secret is on this answer only: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def my_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask, then revoke one of the person's tokens (anyone else's is a 404, as a missing one)."""
    try:
        token = tokens.own_token_get(actor=request.user, token_id=pk)
    except NotFound:
        return TemplateResponse(request, "me/token_revoke.html", {"title": "No such token", "token": None},
                                status=404)
    if request.method == "POST":
        tokens.token_revoke(actor=request.user, token_id=pk)
        messages.success(request, f"Revoked “{token.name}”: it no longer works.")
        return redirect("me-tokens")
    return TemplateResponse(request, "me/token_revoke.html", {"title": f"Revoke “{token.name}”?",
                                                              "token": token})
