"""Chat-history imports in the admin: who uploaded what into which space, and the report
(docs/capture.md). Read-only: an import is started through the API or sam_chat_import."""

from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from core.admin_tables import ReadOnlyAdmin
from governance import access
from governance.admin import VisibleSpaceFilter
from memories.models import ChatImport


@admin.register(ChatImport)
class ChatImportAdmin(ReadOnlyAdmin):
    list_display = ("id", "source", "space", "status", "conversations", "created", "reinforced", "rejected",
                    "item_errors", "created_by", "created_at", "finished_at")
    list_filter = ("status", "source", ("space", VisibleSpaceFilter))
    list_select_related = ("space", "created_by")
    search_fields = ("=id",)
    search_help_text = "An exact import id."
    fields = ("id", "source", "space", "status", "file_name", "size_bytes", "created_by", "created_at",
              "started_at", "finished_at", "error", "report_view")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChatImport]:
        return access.restrict(super().get_queryset(request), request.user)

    @admin.display(description="conversations")
    def conversations(self, item: ChatImport) -> str:
        report = item.report or {}
        seen, skipped = report.get("conversations_seen", 0), report.get("conversations_skipped", 0)
        return f"{seen} ({skipped} unchanged)" if skipped else str(seen)

    @admin.display(description="memories")
    def created(self, item: ChatImport) -> int:
        return (item.report or {}).get("memories_created", 0)

    @admin.display(description="reinforced")
    def reinforced(self, item: ChatImport) -> int:
        return (item.report or {}).get("memories_reinforced", 0)

    @admin.display(description="rejected")
    def rejected(self, item: ChatImport) -> int:
        return len((item.report or {}).get("rejected", []))

    @admin.display(description="unreadable items")
    def item_errors(self, item: ChatImport) -> int:
        return len((item.report or {}).get("errors", []))

    @admin.display(description="report")
    def report_view(self, item: ChatImport) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>",
                           json.dumps(item.report or {}, indent=2, sort_keys=True))
