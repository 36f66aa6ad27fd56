"""The review queue in the admin: what needs a curator, with the actions that resolve it
through memories.feedback (audited, within roles and modes; docs/lifecycle.md)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from governance import access
from governance.admin import VisibleSpaceFilter
from memories import feedback
from memories.models import MemoryStats, ReviewItem
from samsite.core.errors import DomainError


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    list_display = ("kind", "memory_title", "space", "reason", "confidence", "status", "created_at")
    list_filter = ("status", "kind", ("space", VisibleSpaceFilter))
    list_select_related = ("space", "memory")
    search_fields = ("=memory__id",)
    search_help_text = "An exact memory id."
    fields = (
        "kind",
        "other",
        "status",
        "space",
        "memory",
        "reason",
        "evidence",
        "resolution",
        "resolved_by",
        "resolved_at",
        "created_at",
    )
    readonly_fields = fields
    actions = ("archive_memories", "keep_memories", "merge_near_duplicates", "dismiss_items")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReviewItem]:
        return access.restrict(super().get_queryset(request), request.user)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="memory")
    def memory_title(self, item: ReviewItem) -> str:
        return item.memory.title

    @admin.display(description="confidence now")
    def confidence(self, item: ReviewItem) -> str:
        stats = MemoryStats.objects.filter(memory_id=item.memory_id).first()
        return f"{stats.confidence:.2f}" if stats else "—"

    def _resolve(self, request: HttpRequest, queryset: QuerySet[ReviewItem], action: str) -> None:
        done = 0
        for item in queryset.filter(status="open"):
            try:
                feedback.review_resolve(
                    actor=request.user, item_id=item.pk, action=action, note="resolved in the admin"
                )
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{item}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{action}: {done} review items resolved.")

    @admin.action(description="Archive their memories")
    def archive_memories(self, request: HttpRequest, queryset: QuerySet[ReviewItem]) -> None:
        self._resolve(request, queryset, "archive")

    @admin.action(description="Keep their memories (reset confidence; contested: confirmed)")
    def keep_memories(self, request: HttpRequest, queryset: QuerySet[ReviewItem]) -> None:
        self._resolve(request, queryset, "keep")

    @admin.action(description="Merge near duplicates (the newer into the older)")
    def merge_near_duplicates(self, request: HttpRequest, queryset: QuerySet[ReviewItem]) -> None:
        self._resolve(request, queryset.filter(kind="near_duplicate"), "merge")

    @admin.action(description="Dismiss")
    def dismiss_items(self, request: HttpRequest, queryset: QuerySet[ReviewItem]) -> None:
        self._resolve(request, queryset, "dismiss")
