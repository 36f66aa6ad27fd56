"""Coding sessions and memory cards in the admin: sessions with their timeline and handoff,
cards with their evidence and checks, and actions that record a curator's check through
the services (docs/sessions.md, "Curation")."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from core.admin_tables import ReadOnlyAdmin, html_table
from core.errors import DomainError
from governance import access
from governance.admin import VisibleSpaceFilter
from prd.models import AgentSession, MemoryCard, SessionEvent
from prd.sessions import selectors as session_selectors
from prd.sessions import services

TIMELINE_EVENTS = 200


@admin.register(AgentSession)
class AgentSessionAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "space", "agent_id", "event_count", "first_event_at", "last_event_at")
    list_filter = (("space", VisibleSpaceFilter),)
    search_fields = ("=id", "=key", "=agent_id")
    search_help_text = "An exact session id, key or agent id."
    list_select_related = ("space",)
    fields = (
        "id",
        "key",
        "space",
        "title",
        "agent_id",
        "event_count",
        "cards_through",
        "first_event_at",
        "last_event_at",
        "timeline",
        "handoff",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentSession]:
        return access.restrict(super().get_queryset(request), request.user)

    @admin.display(description=f"events (newest {TIMELINE_EVENTS})")
    def timeline(self, session: AgentSession) -> str:
        events = list(session.events.order_by("-sequence")[:TIMELINE_EVENTS])[::-1]
        return html_table(
            ("#", "time", "type", "source", "text"),
            (
                (e.sequence, e.ts.strftime("%Y-%m-%d %H:%M:%S"), e.event_type, e.source, e.text[:300] or "—")
                for e in events
            ),
        )

    @admin.display(description="handoff")
    def handoff(self, session: AgentSession) -> str:
        return format_html(
            "<pre style='white-space: pre-wrap'>{}</pre>", session_selectors.handoff_of(session).markdown
        )


@admin.register(SessionEvent)
class SessionEventAdmin(ReadOnlyAdmin):
    list_display = ("sequence", "session", "event_type", "source", "short_text", "ts")
    list_filter = ("event_type", "source")
    # Text, data and references are sealed: search by the unsealed columns.
    search_fields = ("=id", "=event_id", "=session__id")
    search_help_text = "An exact event id (yours or SAM's) or session id."
    list_select_related = ("session",)
    ordering = ("session", "sequence")

    def get_queryset(self, request: HttpRequest) -> QuerySet[SessionEvent]:
        return access.restrict(super().get_queryset(request), request.user, space_field="session__space")

    @admin.display(description="text")
    def short_text(self, event: SessionEvent) -> str:
        return event.text[:120]


@admin.register(MemoryCard)
class MemoryCardAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "claim", "space", "card_type", "status", "checked_at", "session")
    list_filter = ("card_type", "status", ("space", VisibleSpaceFilter))
    search_fields = ("=id", "=session__id", "=memory__id")
    search_help_text = "An exact card, session or memory id."
    list_select_related = ("space", "memory", "session")
    fields = (
        "id",
        "space",
        "card_type",
        "memory",
        "session",
        "status",
        "validator",
        "checked_at",
        "ttl_days",
        "evidence_table",
        "check_table",
        "error",
    )
    readonly_fields = fields
    actions = ("mark_pass", "mark_stale", "mark_failed")

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryCard]:
        return access.restrict(super().get_queryset(request), request.user)

    @admin.display(description="claim")
    def claim(self, card: MemoryCard) -> str:
        return card.memory.title if card.memory else "— (memory deleted)"

    @admin.display(description="evidence")
    def evidence_table(self, card: MemoryCard) -> str:
        return html_table(
            ("event", "session", "time", "type", "text"),
            (
                (
                    e.event_id,
                    e.session_id,
                    e.ts.strftime("%Y-%m-%d %H:%M:%S"),
                    e.event_type,
                    e.text[:200] or "—",
                )
                for e in card.evidence.order_by("ts", "sequence")
            ),
        )

    @admin.display(description="checks")
    def check_table(self, card: MemoryCard) -> str:
        return html_table(
            ("time", "status", "validator", "note"),
            (
                (c.checked_at.strftime("%Y-%m-%d %H:%M"), c.status, c.validator, c.note or "—")
                for c in card.validations.all()
            ),
        )

    def _check(self, request: HttpRequest, queryset: QuerySet[MemoryCard], status: str) -> None:
        done = 0
        for card in queryset:
            try:
                services.card_validate(
                    actor=request.user,
                    card_id=card.pk,
                    status=status,
                    validator=f"curator:{request.user}",
                    note="checked in the admin",
                )
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{card}: {exc.message}", messages.ERROR)
        self.message_user(request, f"Marked {done} cards {status}.")

    @admin.action(description="Mark as checked (pass)")
    def mark_pass(self, request: HttpRequest, queryset: QuerySet[MemoryCard]) -> None:
        self._check(request, queryset, "pass")

    @admin.action(description="Mark as stale")
    def mark_stale(self, request: HttpRequest, queryset: QuerySet[MemoryCard]) -> None:
        self._check(request, queryset, "stale")

    @admin.action(description="Mark as failed")
    def mark_failed(self, request: HttpRequest, queryset: QuerySet[MemoryCard]) -> None:
        self._check(request, queryset, "failed")
