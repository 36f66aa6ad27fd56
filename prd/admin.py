"""PRD executions and thinking chains in the admin: read-only history, actions through services.

Events and decisions are an append-only log, so nothing here edits or deletes them; an
execution's page shows its progress, event timeline, decisions and runs.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from core.admin_tables import ReadOnlyAdmin, html_table
from core.errors import DomainError
from governance import access
from governance.admin import VisibleSpaceFilter
from prd import selectors, services
from prd.models import FormedMemory, PRDDecision, PRDEvent, PRDExecution, ThinkingChain

TIMELINE_EVENTS = 200


@admin.register(PRDExecution)
class PRDExecutionAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "prd_ref", "space", "status", "progress_line", "event_count", "last_event_at",
                    "compacted_at")
    list_filter = ("status", ("space", VisibleSpaceFilter))
    # Not the title: it is sealed, so SQL cannot search it.
    search_fields = ("=id", "prd_ref")
    list_select_related = ("space",)
    fields = ("id", "space", "prd_ref", "title", "prd_hash", "status", "progress_table", "summary",
              "summary_source", "compacted_at", "timeline", "decision_table", "run_table", "created_at",
              "completed_at")
    readonly_fields = fields
    actions = ("recompute_progress", "compact_again")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PRDExecution]:
        return access.restrict(super().get_queryset(request), request.user)

    @admin.display(description="progress")
    def progress_line(self, execution: PRDExecution) -> str:
        counts = execution.progress_counts()
        total = sum(counts.values())
        parts = [f"{counts['completed']}/{total} done"]
        parts += [f"{counts[s]} {s.replace('_', ' ')}" for s in ("in_progress", "blocked") if counts[s]]
        return ", ".join(parts)

    @admin.display(description="progress (from the events)")
    def progress_table(self, execution: PRDExecution) -> str:
        return html_table(("state", "requirements"), (
            (state.replace("_", " "), ", ".join(ids) or "—") for state, ids in execution.progress.items()
        ))

    @admin.display(description=f"event timeline (newest {TIMELINE_EVENTS})")
    def timeline(self, execution: PRDExecution) -> str:
        events = list(execution.events.order_by("-sequence")[:TIMELINE_EVENTS])[::-1]
        link = reverse("admin:prd_prdevent_changelist") + f"?execution__id__exact={execution.pk}"
        table = html_table(("#", "time", "type", "requirement", "summary", "agent", "resolves"), (
            (e.sequence, e.created_at.strftime("%Y-%m-%d %H:%M:%S"), e.type, e.requirement_id or "—",
             e.summary[:300], e.agent_id or "—", e.resolves_id or "—") for e in events
        ))
        return format_html('{}<p><a href="{}">All {} events</a></p>', table, link, execution.event_count)

    @admin.display(description="decisions")
    def decision_table(self, execution: PRDExecution) -> str:
        return html_table(("time", "requirement", "decision", "reason", "rejected"), (
            (d.created_at.strftime("%Y-%m-%d %H:%M"), d.requirement_id or "—", d.decision, d.reason or "—",
             "; ".join(d.alternatives) or "—") for d in execution.decisions.order_by("created_at", "id")
        ))

    @admin.display(description="runs (start or resume)")
    def run_table(self, execution: PRDExecution) -> str:
        return html_table(("run", "started", "agent", "PRD changed", "changes"), (
            (r.number, r.started_at.strftime("%Y-%m-%d %H:%M"), r.agent_id or "—",
             "yes" if r.prd_changed else "no", _change_line(r.changes))
            for r in execution.runs.order_by("-number")
        ))

    @admin.action(description="Recompute progress from the event log")
    def recompute_progress(self, request: HttpRequest, queryset: QuerySet[PRDExecution]) -> None:
        fixed = 0
        for execution in queryset:
            try:
                fixed += services.execution_rematerialise(actor=request.user, execution_id=execution.pk)
            except DomainError as exc:
                self.message_user(request, f"{execution}: {exc.message}", messages.ERROR)
        self.message_user(request, f"Checked {queryset.count()} executions; {fixed} needed a rebuild.")

    @admin.action(description="Compact again (summary and memories)")
    def compact_again(self, request: HttpRequest, queryset: QuerySet[PRDExecution]) -> None:
        queued = 0
        for execution in queryset:
            try:
                queued += services.execution_compaction_enqueue(actor=request.user, execution_id=execution.pk)
            except DomainError as exc:
                self.message_user(request, f"{execution}: {exc.message}", messages.ERROR)
        self.message_user(request, f"Queued compaction of {queued} completed executions.")


def _change_line(changes: dict) -> str:
    if not changes.get("changed"):
        return "first run" if changes.get("first_run") else "—"
    parts = []
    if changes.get("hash"):
        parts.append("content hash")
    if changes.get("title"):
        parts.append("title")
    for key in ("added", "removed", "modified"):
        ids = changes.get(f"requirements_{key}") or []
        if ids:
            parts.append(f"{key} {', '.join(ids)}")
    return "; ".join(parts)


@admin.register(PRDEvent)
class PRDEventAdmin(ReadOnlyAdmin):
    list_display = ("sequence", "execution", "type", "requirement_id", "short_summary", "agent_id",
                    "created_at")
    list_filter = ("type",)
    # Summaries are sealed (no SQL match on them): search by id, execution, requirement, agent.
    search_fields = ("=id", "=execution__id", "=requirement_id", "=agent_id")
    search_help_text = "An exact event id, execution id, requirement id or agent id."
    list_select_related = ("execution",)
    ordering = ("execution", "sequence")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PRDEvent]:
        return access.restrict(super().get_queryset(request), request.user, space_field="execution__space")

    @admin.display(description="summary")
    def short_summary(self, event: PRDEvent) -> str:
        return event.summary[:120]


@admin.register(PRDDecision)
class PRDDecisionAdmin(ReadOnlyAdmin):
    list_display = ("short_decision", "execution", "requirement_id", "agent_id", "created_at")
    # Decisions and reasons are sealed (no SQL match on them): search by the unsealed columns.
    search_fields = ("=id", "=execution__id", "=event__id", "=requirement_id", "=agent_id")
    search_help_text = "An exact decision id, execution id, event id, requirement id or agent id."
    list_select_related = ("execution",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[PRDDecision]:
        return access.restrict(super().get_queryset(request), request.user, space_field="execution__space")

    @admin.display(description="decision")
    def short_decision(self, decision: PRDDecision) -> str:
        return decision.decision[:120]


@admin.register(ThinkingChain)
class ThinkingChainAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "space", "status", "thought_count", "summary_source", "completed_at")
    list_filter = ("status", ("space", VisibleSpaceFilter))
    # Query, thoughts and summary are sealed, so search goes through the keyed full-text
    # index (selectors.chain_list), like the memories admin.
    search_fields = ("=id",)
    search_help_text = "Words from the question, thoughts or summary (or an exact chain id)."
    list_select_related = ("space",)
    fields = ("id", "space", "execution", "agent_id", "query", "status", "thought_list", "summary",
              "summary_source", "summarized_at", "embedding_model", "abandon_reason", "created_at",
              "completed_at")
    readonly_fields = fields
    actions = ("summarise_again",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ThinkingChain]:
        queryset = access.restrict(super().get_queryset(request), request.user)
        return queryset.defer("embedding", "search_vector")

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[ThinkingChain],
                           search_term: str) -> tuple[QuerySet[ThinkingChain], bool]:
        if not search_term.strip():
            return queryset, False
        found = selectors.chain_list(actor=request.user, filters=selectors.ChainFilters(text=search_term))
        return queryset.filter(pk__in=found.values("pk")), False

    @admin.display(description="thoughts")
    def thought_count(self, chain: ThinkingChain) -> int:
        return len(chain.thoughts)

    @admin.display(description="thoughts")
    def thought_list(self, chain: ThinkingChain) -> str:
        def marks(t: dict) -> str:
            notes = []
            if t.get("is_revision"):
                notes.append(f"revises {t['revises']}")
            if t.get("branch_id"):
                notes.append(f"branch {t['branch_id']} from {t['branch_from']}")
            return ", ".join(notes) or "—"

        rows = ((t["number"], t["content"], marks(t)) for t in chain.thoughts)
        return html_table(("#", "thought", "notes"), rows)

    @admin.action(description="Summarise again (summary, embedding and memories)")
    def summarise_again(self, request: HttpRequest, queryset: QuerySet[ThinkingChain]) -> None:
        queued = 0
        for chain in queryset:
            try:
                queued += services.chain_summary_enqueue(actor=request.user, chain_id=chain.pk)
            except DomainError as exc:
                self.message_user(request, f"{chain}: {exc.message}", messages.ERROR)
        self.message_user(request, f"Queued the summary of {queued} completed chains.")


@admin.register(FormedMemory)
class FormedMemoryAdmin(ReadOnlyAdmin):
    list_display = ("key", "rule", "memory_link", "error", "created_at")
    list_filter = ("rule",)
    search_fields = ("key", "=memory__id", "=execution__id", "=chain__id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[FormedMemory]:
        # A link is visible when its source is (an execution's or a chain's space).
        queryset = super().get_queryset(request).select_related("memory")
        by_execution = access.restrict(queryset.filter(execution__isnull=False), request.user,
                                       space_field="execution__space")
        by_chain = access.restrict(queryset.filter(chain__isnull=False), request.user,
                                   space_field="chain__space")
        return by_execution | by_chain

    @admin.display(description="memory")
    def memory_link(self, link: FormedMemory) -> str:
        if link.memory_id is None:
            return "—"
        url = reverse("admin:memories_memory_change", args=[link.memory_id])
        return format_html('<a href="{}">{}</a>', url, link.memory_id)


# Sessions and cards register their admins in their own module (autodiscovery imports only this one).
from prd.sessions import admin as sessions_admin  # noqa: E402, F401
