"""The site's front door: where "/" sends each visitor."""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect


def home(request: HttpRequest) -> HttpResponse:
    """Staff to the admin; every other signed-in user to their My memory page; anyone else to
    the sign-in page, which brings them back here."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if request.user.is_staff:
        return redirect("admin:index")
    return redirect("me-home")
