"""Entities in the admin: curators see what a space's memories name, correct a kind or a
name, merge entities that are one, and remove one read by mistake, through
memories.entities.services (audited). Only entities named by a memory the reader may read
are listed, and aliases only to the space's curators."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from core.errors import DomainError
from governance import access
from governance.admin import CuratorsChange, VisibleSpaceFilter
from memories.entities import services as entity_services
from memories.entities.linking import by_name
from memories.entities.mentions import normalise
from memories.models import Entity, EntityKind, Memory

MEMORIES_SHOWN = 20


class EntityAdminForm(forms.ModelForm):
    name = forms.CharField(max_length=120)

    class Meta:
        model = Entity
        fields = ("kind", "name")

    def clean_name(self) -> str:
        # A name another entity of the space has is refused here, on the form, not later.
        name = self.cleaned_data["name"]
        key = normalise(name)
        if len(key) < 2:
            raise ValidationError("A name of two characters or more.")
        taken = by_name(self.instance.space_id, [key]).get(key)
        if taken is not None and taken.pk != self.instance.pk:
            raise ValidationError("Another entity has that name: merge them instead.")
        return name


@admin.register(Entity)
class EntityAdmin(CuratorsChange, admin.ModelAdmin):
    form = EntityAdminForm
    change_form_template = "admin/memories/entity/change_form.html"
    list_display = ("name", "kind_shown", "space", "mentions")
    list_filter = (("space", VisibleSpaceFilter), "kind")
    list_select_related = ("space",)
    list_per_page = 100
    # The count of a big table's filtered rows is a second full scan; the pager does without.
    show_full_result_count = False
    readonly_fields = ("space",)
    actions = ("merge_selected",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        visible = access.restrict(Memory.objects.filter(archived=False), request.user)
        return (super().get_queryset(request)
                .filter(space__in=access.spaces_visible(request.user))
                .annotate(mention_count=Count("links", filter=Q(links__memory_id__in=visible.values("pk"))))
                .filter(mention_count__gt=0).order_by("-mention_count", "id"))

    def get_fields(self, request: HttpRequest, obj=None):
        # Aliases may come from memories a reader below curator cannot see.
        return ("space", "kind", "name", "aliases_shown") if self._curates(request, obj) else (
            "space", "kind", "name")

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return ("space", "aliases_shown")

    @admin.display(description="kind", ordering="kind")
    def kind_shown(self, entity: Entity) -> str:
        # A capitalised name no mention gave a kind reads "Name" otherwise, which says nothing.
        return "other" if entity.kind == EntityKind.NAME else entity.get_kind_display()

    def changelist_view(self, request: HttpRequest, extra_context=None):
        return super().changelist_view(request, {"title": "Entities: who and what memories name",
                                                 **(extra_context or {})})

    @admin.display(description="memories naming it", ordering="mention_count")
    def mentions(self, entity: Entity) -> int:
        return entity.mention_count  # type: ignore[attr-defined]

    @admin.display(description="aliases")
    def aliases_shown(self, entity: Entity) -> str:
        return ", ".join(entity.aliases) or "—"

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        # The memories naming it that this reader may read, newest first.
        extra_context = extra_context or {}
        entity = self.get_object(request, object_id)
        if entity is not None:
            extra_context["entity_memories"] = access.restrict(
                Memory.objects.filter(archived=False, entity_links__entity=entity), request.user,
            ).select_related("space").order_by("-created_at")[:MEMORIES_SHOWN]
        return super().change_view(request, object_id, form_url, extra_context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # entities are read from memories

    def get_deleted_objects(self, objs, request: HttpRequest):
        # Django would list each memory link by its memory's id, hidden memories included:
        # name only the entities.
        return [str(obj) for obj in objs], {}, set(), []

    def save_model(self, request: HttpRequest, obj: Entity, form: EntityAdminForm, change: bool) -> None:
        try:
            entity_services.entity_update(actor=request.user, entity_id=obj.pk,
                                          kind=form.cleaned_data["kind"], name=form.cleaned_data["name"])
        except DomainError as exc:
            raise PermissionDenied(exc.message) from exc

    def delete_model(self, request: HttpRequest, obj: Entity) -> None:
        try:
            entity_services.entity_delete(actor=request.user, entity_id=obj.pk)
        except DomainError as exc:
            raise PermissionDenied(exc.message) from exc

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:
        for entity in queryset:
            self.delete_model(request, entity)

    @admin.action(description="Merge selected entities into the most mentioned")
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:
        # Most mentioned (as this reader counts), then oldest, whatever the list's sort.
        chosen = sorted(queryset, key=lambda e: (-e.mention_count, e.pk))  # type: ignore[attr-defined]
        if len({entity.space_id for entity in chosen}) != 1 or len(chosen) < 2:
            self.message_user(request, "Select two or more entities of one space.", messages.ERROR)
            return
        kept, *others = chosen
        try:
            for other in others:
                entity_services.entity_merge(actor=request.user, entity_id=kept.pk, other_id=other.pk)
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        self.message_user(request, f"Merged {len(others)} into “{kept.name}”.", messages.SUCCESS)
