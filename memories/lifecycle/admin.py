"""The review queue in the admin: what needs a curator, with the actions that resolve it
through memories.lifecycle.feedback (audited, within roles and modes; docs/lifecycle.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.timezone import localtime

from core.admin_text import label, readable
from core.errors import DomainError
from governance import access
from governance.admin import VisibleSpaceFilter
from memories.lifecycle import curation, feedback
from memories.models import Memory, MemoryStats, ReviewItem, ReviewKind

# The rows of the side-by-side screen: (label, how to read it off a memory); those in
# curation.MERGE_TEXT_FIELDS can be picked per side in a merge.
COMPARED = (
    ("title", lambda m: m.title),
    ("content", lambda m: m.content),
    ("summary", lambda m: m.summary),
    ("tags", lambda m: ", ".join(m.tags)),
    ("canonical phrases", lambda m: "; ".join(m.canonical_phrases)),
    ("kind", lambda m: label(m.kind)),
    ("reliability", lambda m: m.reliability),
    ("priority", lambda m: m.priority),
    ("confidence", lambda m: f"{m.stats.confidence:.2f}"),
    ("version", lambda m: m.version),
    ("said at", lambda m: readable(m.occurred_at or m.created_at)),
    ("archived", lambda m: "yes" if m.archived else "no"),
)

# What each resolution does, beside its button (feedback.review_resolve does it). A pair is
# the older memory and the newer one; `keep` differs for a pair and for one memory.
EXPLAINED = {
    "merge": "One memory from both: the older keeps its id and takes the side picked above for "
             "title, content and summary, tags and phrases from both; the newer is archived.",
    "supersede": "The newer replaces the older: the older is archived, marked superseded by the newer.",
    "reject": "The newer is wrong: it is archived, the older stays.",
    "keep_pair": "Both hold (they say different things): nothing changes, and this pair is not raised again.",
    "keep": "The memory holds: its confidence goes back to 0.75 at least; a contested one becomes confirmed.",
    "archive": "Recall stops returning the memory; it can be restored from the archive.",
    "revised": "The memory was corrected elsewhere: its reliability goes back to unverified.",
    "dismiss": "Close this item and change nothing.",
}
# Evidence keys as a curator reads them (others are shown with their own name in words).
EVIDENCE_LABELS = {
    "rule": "why SAM raised it",
    "certain": "SAM is certain",
    "cosine": "similarity of meaning (0–1)",
    "jaccard": "words in common (0–1)",
    "containment": "words of one found in the other (0–1)",
    "pass_rate": "training examples passing",
    "confidence_before": "confidence before",
    "min_confidence": "archived below",
}


def evidence_shown(evidence: dict[str, Any]) -> list[tuple[str, str]]:
    """A review item's evidence as (what, value) in words, in its stored order."""
    return [(EVIDENCE_LABELS.get(key, label(key)), readable(value)) for key, value in evidence.items()]


def actions_shown(item: ReviewItem) -> list[dict[str, str]]:
    """The resolutions open to `item`, each with its button text and what it does."""
    pair = item.other_id is not None
    return [{"action": action, "button": action.capitalize(),
             "help": EXPLAINED["keep_pair" if action == "keep" and pair else action]}
            for action in feedback.RESOLUTIONS[ReviewKind(item.kind)]]


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    list_display = ("kind", "memory_title", "space", "reason", "confidence", "status", "raised")
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

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None):
        return super().changelist_view(request, {"title": "Review queue: what needs a curator's decision",
                                                 **(extra_context or {})})

    @admin.display(description="memory")
    def memory_title(self, item: ReviewItem) -> str:
        return item.memory.title

    @admin.display(description="raised", ordering="created_at")
    def raised(self, item: ReviewItem) -> str:
        return readable(localtime(item.created_at))

    @admin.display(description="confidence now")
    def confidence(self, item: ReviewItem) -> str:
        stats = MemoryStats.objects.filter(memory_id=item.memory_id).first()
        return f"{stats.confidence:.2f}" if stats else "—"

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """One item: the memory (and for a pair, the other) side by side, field by field,
        the evidence, and the actions that resolve it (merge picks a side per field)."""
        item = self.get_object(request, unquote(object_id))
        if item is None:
            raise Http404("No such review item.")
        if not self.has_view_or_change_permission(request, item):
            raise PermissionDenied
        ids = [item.memory_id, *([item.other_id] if item.other_id else [])]
        visible = {m.pk: m for m in access.restrict(Memory.objects.select_related("stats"), request.user)
                   .filter(pk__in=ids)}
        if len(visible) != len(ids):
            raise Http404("No such review item.")  # a pair shows only to who sees both
        here = reverse("admin:memories_reviewitem_change", args=[object_id])
        if request.method == "POST" and item.status == "open":
            action = request.POST.get("action", "")
            fields = {name: "other" for name in curation.MERGE_TEXT_FIELDS
                      if action == "merge" and request.POST.get(f"pick_{name}") == "other"}
            try:
                feedback.review_resolve(actor=request.user, item_id=item.pk, action=action,
                                        note=request.POST.get("note", "")[:500], fields=fields or None)
            except DomainError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                return HttpResponseRedirect(here)
            self.message_user(request, f"{item.get_kind_display()}: {action} done.")
            return HttpResponseRedirect(reverse("admin:memories_reviewitem_changelist"))
        memory, other = visible[item.memory_id], visible.get(item.other_id or "")
        rows = [{"label": name, "name": name if name in curation.MERGE_TEXT_FIELDS else "",
                 "memory": read(memory), "other": read(other) if other else None,
                 "differs": other is not None and read(memory) != read(other)}
                for name, read in COMPARED]
        context = {
            **self.admin_site.each_context(request), "title": f"Review: {item.get_kind_display().lower()}",
            "opts": self.model._meta, "item": item, "memory": memory, "other": other, "rows": rows,
            "evidence": evidence_shown(item.evidence or {}),
            "resolution": label(item.resolution) if item.resolution else "",
            "actions_allowed": actions_shown(item) if item.status == "open" else (),
            "can_resolve": access.can(request.user, "curate", item.space),
        }
        return TemplateResponse(request, "admin/memories/reviewitem/review.html", context)

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
