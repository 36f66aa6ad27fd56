"""SAM's admin site: SAM's name in the header and title, and the index ordered by a curator's day.

Django lists an admin's apps and their models alphabetically, which put the audit log, users
and jobs above the fold and the review queue and memories below it. Here the apps and the
models within them follow the order a curator works in; anything not named keeps Django's
alphabetical place after them, so an app added later still shows.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest

# Apps in the order a curator reaches for them: the work (what needs a decision, then what
# SAM knows), the spaces it lives in, agents' work, recall, then running the server.
APP_ORDER = ("memories", "core", "prd", "retrieval", "governance", "audit", "auth", "django_q")
# Within an app, these models first, in this order (the rest alphabetically after).
MODEL_ORDER: dict[str, tuple[str, ...]] = {
    "memories": ("ReviewItem", "Memory", "Entity", "Category", "ChatImport"),
    "prd": ("AgentSession", "MemoryCard", "SessionEvent", "PRDExecution", "PRDEvent", "PRDDecision",
            "FormedMemory", "ThinkingChain"),
    "governance": ("ApiToken", "UserMemorySettings", "DataKey"),
}
# Names on the index and in the sidebar where the model's own reads badly there.
INDEX_NAMES = {
    ("memories", "ReviewItem"): "Review queue",
    ("governance", "ApiToken"): "API tokens",
}


def _rank(order: tuple[str, ...], key: str) -> tuple[int, str]:
    return (order.index(key), "") if key in order else (len(order), key)


class SamAdminSite(admin.AdminSite):
    site_header = "SAM — Semantic Anchor Memory"
    site_title = "SAM admin"
    index_title = "Curation and administration"
    # "View site": a curator's own memory page ("/" sends staff back here).
    site_url = "/me/"

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        apps = super().get_app_list(request, app_label)
        for app in apps:
            label = app["app_label"]
            order = MODEL_ORDER.get(label, ())
            app["models"].sort(key=lambda model: _rank(order, model["object_name"]) if order
                               else (0, str(model["name"])))
            for model in app["models"]:
                model["name"] = INDEX_NAMES.get((label, model["object_name"]), model["name"])
        apps.sort(key=lambda app: _rank(APP_ORDER, app["app_label"]))
        return apps


class SamAdminConfig(AdminConfig):
    """django.contrib.admin with SamAdminSite as `admin.site` (listed in INSTALLED_APPS)."""

    default_site = "samsite.admin_site.SamAdminSite"
