"""The audit log in the admin: read-only, with a page that verifies the chain."""

from __future__ import annotations

import json

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html

from core.models import Space
from governance import access
from governance.audit import selectors
from governance.audit.models import AuditEvent
from governance.audit.verify import audit_chain_verify
from governance.crypto.errors import KeyDestroyed


class SpaceFilter(admin.SimpleListFilter):
    """Spaces by their current slug; events keep the slug they had, in `space_slug`.

    Only the spaces whose events the reader may audit are offered."""

    title = "space"
    parameter_name = "space_id"

    def lookups(self, request, model_admin):
        spaces = Space.objects.order_by("slug")
        if not access.sees_everything(request.user):
            spaces = spaces.filter(pk__in=selectors.auditable_space_ids(request.user))
        return [(str(pk), slug) for pk, slug in spaces.values_list("pk", "slug")]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(space_id=self.value())
        return queryset


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("id", "at", "action", "actor_label", "space_slug", "target_type", "target_id",
                    "request_id", "short_hash")
    list_filter = ("action", SpaceFilter, "at", "target_type")
    date_hierarchy = "at"
    # Exact matches: they use the indexes, and these are ids people paste in.
    search_fields = ("=target_id", "=actor_label", "=request_id", "=hash")
    # Counting a long log on every page view is slow; the pager does without.
    show_full_result_count = False
    fields = ("id", "at", "action", "actor_label", "actor_id", "space_slug", "space_id",
              "target_type", "target_id", "request_id", "payload_pretty", "prev_hash", "hash")
    readonly_fields = fields
    actions = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest):
        # Through the gateway, like the timelines: events of spaces the reader may audit.
        return selectors.audit_event_list(actor=request.user)

    def get_fields(self, request: HttpRequest, obj=None):
        if obj is not None and not selectors.audit_payload_readable(actor=request.user, event=obj):
            return tuple("payload_hidden" if name == "payload_pretty" else name for name in self.fields)
        return self.fields

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.get_fields(request, obj)

    @admin.display(description="payload")
    def payload_hidden(self, event: AuditEvent) -> str:
        return "(hidden: the memory is deleted, and only the space's owners read what it said)"

    @admin.display(description="hash")
    def short_hash(self, event: AuditEvent) -> str:
        return event.hash[:12] + "…"

    @admin.display(description="payload")
    def payload_pretty(self, event: AuditEvent) -> str:
        try:
            payload = event.payload_data
        except KeyDestroyed:
            return "(unreadable: its data key was destroyed)"
        text = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False)
        return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', text)

    def get_urls(self):
        verify = path("verify/", self.admin_site.admin_view(self.verify_view), name="audit_auditevent_verify")
        return [verify, *super().get_urls()]

    def verify_view(self, request: HttpRequest) -> HttpResponse:
        """Walk the whole chain now (reads every event: seconds for a large log)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        expect_head = request.GET.get("expect_head", "").strip() or None
        report = audit_chain_verify(expect_head=expect_head)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Verify the audit chain",
            "report": report,
            "expect_head": expect_head or "",
        }
        return TemplateResponse(request, "admin/audit/auditevent/verify.html", context)
