"""Curation in the admin. Every change goes through memories.services, as the API's do."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth import get_user_model
from django.contrib.postgres.forms import SimpleArrayField
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.timezone import localtime

from core.admin_text import label, readable
from core.errors import DomainError
from core.models import Space
from governance import access, retention
from governance import spaces as space_services
from governance.admin import (
    RestrictedTagInline,
    SpaceMembershipInline,
    VisibleSpaceFilter,
    save_governance_formset,
)
from governance.audit import selectors as audit_selectors
from memories import entry, limits, selectors, services
from memories.admin_history import timeline_rows, version_rows
from memories.capture import transfer
from memories.entities import graph
from memories.lifecycle import curation
from memories.models import EmbeddingStatus, Memory, MemoryRelation, MemoryVersion


@admin.register(Space)
class SpaceAdmin(admin.ModelAdmin):
    """Spaces with their members, roles and restricted tags; every change goes through the
    services so it is permission-checked and audited."""

    list_display = ("slug", "name", "kind", "mode", "retention_days", "created_at")
    list_filter = ("kind", "mode", "retention_days")
    # Not the description: it is sealed, so SQL cannot search it.
    search_fields = ("slug", "name")
    prepopulated_fields = {"slug": ("name",)}
    fields = ("slug", "name", "kind", "description", "mode", "retention_days", "prune_decayed",
              "note_cap", "high_idle_days", "duplicate_policy", "near_duplicate_policy",
              "supersession_policy", "capture_sources", "redaction_allowlist")
    inlines = (SpaceMembershipInline, RestrictedTagInline)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Space]:
        return access.spaces_visible(request.user)

    def get_readonly_fields(self, request: HttpRequest, obj: Space | None = None) -> tuple[str, ...]:
        return ("slug",) if obj else ()

    def get_prepopulated_fields(self, request: HttpRequest, obj: Space | None = None) -> dict:
        # The slug is read-only once the space exists, so it is not a form field there:
        # prepopulating it would look it up in the form and fail (KeyError).
        return {} if obj else super().get_prepopulated_fields(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Space | None = None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or access.can(request.user, "manage", obj))

    def has_delete_permission(self, request: HttpRequest, obj: Space | None = None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or access.can(request.user, "manage", obj))

    def save_model(self, request: HttpRequest, obj: Space, form, change: bool) -> None:
        values = {name: form.cleaned_data[name] for name in space_services.SPACE_SETTINGS
                  if name in form.cleaned_data}
        if change:
            saved = space_services.space_update(actor=request.user, slug=obj.slug, changes=values)
        else:
            saved = space_services.space_create(actor=request.user, slug=form.cleaned_data["slug"], **values)
        obj.pk = saved.pk
        obj.refresh_from_db()

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        if not save_governance_formset(request, formset):
            super().save_formset(request, form, formset, change)

    def get_deleted_objects(self, objs, request: HttpRequest):
        # The delete goes through governance.retention.space_delete, which checks the
        # owner's right itself; keys, versions and audit rows are not the curator's to
        # delete one by one, so their admins' permissions must not block it.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_model(self, request: HttpRequest, obj: Space) -> None:
        retention.space_delete(actor=request.user, slug=obj.slug)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Space]) -> None:
        for space in queryset:
            retention.space_delete(actor=request.user, slug=space.slug)


class TagFilter(admin.SimpleListFilter):
    title = "tag"
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        tags = (
            access.restrict(Memory.objects.all(), request.user)
            .values_list("tags", flat=True)
        )
        counts: dict[str, int] = {}
        for memory_tags in tags.iterator():
            for tag in memory_tags:
                counts[tag] = counts.get(tag, 0) + 1
        top = sorted(counts, key=lambda t: (-counts[t], t))[:30]
        return [(tag, f"{tag} ({counts[tag]})") for tag in top]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(tags__contains=[self.value()])
        return queryset


class AboutUserFilter(admin.SimpleListFilter):
    """What SAM knows about one person (seed 003, "visible in control"): the memories they
    wrote and those of the personal spaces they own, as far as the curator may read them."""

    title = "about user"
    parameter_name = "about"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        # Those who wrote a memory the curator may read (an import writes as the person it is for).
        writers = access.restrict(Memory.objects.all(), request.user).exclude(created_by=None)
        users = get_user_model().objects.filter(pk__in=writers.values("created_by")).order_by("username")
        return [(str(user.pk), user.get_username()) for user in users[:100]]

    def queryset(self, request, queryset):
        if not self.value() or not self.value().isdigit():
            return queryset
        person = get_user_model().objects.filter(pk=int(self.value())).first()
        return queryset.filter(selectors.about(person)) if person else queryset.none()


class KindGroupFilter(admin.SimpleListFilter):
    """Kind groups: seed 003's fact, preference, style, topic, summary, the rest knowledge
    (not a space's categories, which have their own page)."""

    title = "kind group"
    # The address curators have bookmarked since this filter was called category.
    parameter_name = "category"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [(name, name) for name in selectors.KIND_GROUPS]

    def queryset(self, request, queryset):
        if self.value() in selectors.KIND_GROUPS:
            return queryset.filter(kind__in=selectors.kinds_in_group(self.value()))
        return queryset


class CommaListField(SimpleArrayField):
    """A list edited as "a, b, c" (Django's own field shows "a,b,c"); items are stripped."""

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(str(item) for item in value) if isinstance(value, list) else value


class MemoryAdminForm(forms.ModelForm):
    """Edits the model's fields plus confidence (kept in MemoryStats) and the base version."""

    canonical_phrases = CommaListField(forms.CharField(), required=False, widget=forms.TextInput(
        attrs={"class": "vLargeTextField", "size": 100}))
    tags = CommaListField(forms.CharField(max_length=limits.TAG[1]), required=False, widget=forms.TextInput(
        attrs={"class": "vLargeTextField", "size": 100}))
    confidence_score = forms.FloatField(min_value=0, max_value=1, initial=0.75)
    base_version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    reason = forms.CharField(required=False, max_length=500,
                             help_text="Why this change (kept in the version history).")

    class Meta:
        model = Memory
        fields = (
            "space", "title", "content", "summary", "canonical_phrases", "tags", "memory_type",
            "kind", "priority", "reliability", "importance", "source_type", "source_ref",
            "source_uri", "occurred_at", "context_window", "decay_policy", "metadata",
            "training_examples", "superseded_by",
        )
        widgets = {
            # One line: a title is at most 120 characters (memories/limits.py), and the model's
            # sealed text field would otherwise make it a ten-row textarea.
            "title": forms.TextInput(attrs={"class": "vTextField", "maxlength": limits.TITLE[1],
                                            "style": "width: min(100%, 60em)"}),
            "summary": forms.Textarea(attrs={"rows": 2, "cols": 80}),
            "source_ref": forms.TextInput(attrs={"class": "vTextField", "style": "width: min(100%, 40em)"}),
            "source_uri": forms.TextInput(attrs={"class": "vTextField", "style": "width: min(100%, 40em)"}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("summary", "canonical_phrases", "tags"):
            self.fields[name].required = False
            self.fields[name].help_text = "Leave empty and SAM suggests it."
        self.fields["canonical_phrases"].help_text += " Comma-separated."
        self.fields["tags"].help_text += " Comma-separated."
        if not self.instance._state.adding:
            self.fields["space"].disabled = True
            self.fields["base_version"].initial = self.instance.version
            self.fields["confidence_score"].initial = self.instance.stats.confidence

    def entry_data(self) -> dict[str, Any]:
        """The cleaned form as the services' input shape."""
        data: dict[str, Any] = {name: self.cleaned_data.get(name) for name in self.Meta.fields}
        data["source"] = {
            "type": data.pop("source_type"), "ref": data.pop("source_ref"),
            "uri": data.pop("source_uri") or None,
        }
        data["space"] = data["space"].slug if data.get("space") else None
        data["superseded_by"] = data["superseded_by"].pk if data.get("superseded_by") else None
        data["confidence_score"] = self.cleaned_data.get("confidence_score")
        data["summary"] = data.get("summary") or ""
        data["canonical_phrases"] = data.get("canonical_phrases") or []
        if self.instance._state.adding and not data.get("tags"):
            data.pop("tags", None)
        return data

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        assert cleaned is not None  # ModelForm.clean() returns cleaned_data
        if self.errors:
            return cleaned
        # The same normalisation and limits the services apply, reported on the form.
        data = self.entry_data()
        data.pop("space", None)
        state = {**entry.DEFAULTS, **entry.normalise(data)}
        entry.fill_suggestions(state, explicit=set(data))
        for where, problems in entry.validate(state).items():
            field = where.split(".")[0].split("[")[0]
            field = {"source": "source_ref"}.get(field, field)
            self.add_error(field if field in self.fields else None, f"{where}: {' '.join(problems)}")
        base = cleaned.get("base_version")
        editing = not self.instance._state.adding
        if editing and base and base != Memory.objects.get(pk=self.instance.pk).version:
            raise forms.ValidationError(
                "Someone changed this memory while you edited it. Reload the page to see the "
                "current version, then apply your change again."
            )
        return cleaned


# Events shown on a memory's audit timeline page (the API pages through all of them).
TIMELINE_EVENTS = 200


class MemoryVersionInline(admin.TabularInline):
    model = MemoryVersion
    extra = 0
    can_delete = False
    fields = ("version", "created_at", "actor", "reason", "changes")
    readonly_fields = fields
    ordering = ("-version",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class MemoryRelationInline(admin.TabularInline):
    """Edges from this memory to others of its space, added and removed by curators through
    memories.entities.graph (audited). Edges to memories the curator may not read are not shown."""

    model = MemoryRelation
    fk_name = "source"
    extra = 0
    fields = ("relation_type", "target", "strength", "provenance")
    readonly_fields = ("provenance",)
    autocomplete_fields = ("target",)
    verbose_name = "link to another memory"
    verbose_name_plural = "links to other memories (curators)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryRelation]:
        visible = access.restrict(Memory.objects.all(), request.user).values("pk")
        return super().get_queryset(request).filter(target__in=visible).select_related("target")

    def _curates(self, request: HttpRequest, obj: Memory | None) -> bool:
        return obj is not None and access.can(request.user, "curate", obj.space)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._curates(request, obj)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._curates(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._curates(request, obj)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return obj is not None


def save_relations(request: HttpRequest, memory: Memory, formset) -> None:
    """The inline's rows through memories.entities.graph, so each edge is checked and audited."""
    deleted = {id(form) for form in formset.deleted_forms}

    # What the admin's change message reads after a formset's own save().
    formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
    for form in formset.forms:
        # The row's stored edge (what the form's hidden id names), before its edits.
        relation = (getattr(form, "cleaned_data", None) or {}).get("id")
        try:
            if id(form) in deleted:
                if relation is not None:
                    graph.relation_delete(actor=request.user, relation_id=relation.pk)
                continue
            if not form.has_changed():
                continue
            data = form.cleaned_data
            moved = (form.initial.get("target") != data["target"].pk
                     or form.initial.get("relation_type") != data["relation_type"])
            # The new edge first: should it be refused, the old one is still there.
            graph.relation_create(actor=request.user, source_id=memory.pk, target_id=data["target"].pk,
                                  relation_type=data["relation_type"], strength=data["strength"],
                                  note="linked in admin")
            if moved and relation is not None:
                graph.relation_delete(actor=request.user, relation_id=relation.pk)
        except DomainError as exc:
            messages.error(request, exc.message)


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    form = MemoryAdminForm
    inlines = (MemoryRelationInline,)
    change_form_template = "admin/memories/memory/change_form.html"
    # Few enough columns to fit a laptop's screen beside the sidebar and the filters; the type,
    # kind group, source, version and embedding details are on the memory's page and in the filters.
    list_display = ("title", "space", "kind_shown", "reliability", "confidence", "state", "updated")
    list_filter = (("space", VisibleSpaceFilter), AboutUserFilter, KindGroupFilter, "memory_type", "kind",
                   "reliability", "archived", "embedding_status", TagFilter)
    # Text is sealed in the database, so search goes through the keyed full-text index.
    search_fields = ("=id",)
    search_help_text = "Words from the title, summary, phrases or content (or an exact id)."
    sortable_by = ("space", "kind_shown", "reliability", "confidence", "state", "updated")
    list_select_related = ("space", "stats")
    list_per_page = 50
    readonly_fields = ("id", "version", "content_hash", "archived", "archived_at",
                       "archive_reason", "embedding_status", "embedding_model", "embedded_at",
                       "embedding_attempts", "embedding_error", "usage_count", "access_count",
                       "last_accessed_at", "created_at", "updated_at")
    autocomplete_fields = ("superseded_by",)
    actions = ("archive_selected", "restore_selected", "merge_selected", "export_selected")
    fieldsets = (
        (None, {"fields": ("space", "title", "content", "summary", "canonical_phrases", "tags")}),
        ("Classification", {"fields": ("memory_type", "kind", "priority", "reliability",
                                       "importance", "confidence_score")}),
        ("Provenance", {"fields": ("source_type", "source_ref", "source_uri", "occurred_at",
                                   "superseded_by")}),
        ("Behaviour", {"classes": ("collapse",),
                       "fields": ("context_window", "decay_policy", "training_examples",
                                  "metadata")}),
        ("State", {"fields": ("id", "version", "content_hash", "archived", "archived_at",
                              "archive_reason", "usage_count", "access_count",
                              "last_accessed_at", "created_at", "updated_at")}),
        ("Embedding", {"classes": ("collapse",),
                       "fields": ("embedding_status", "embedding_model", "embedded_at",
                                  "embedding_attempts", "embedding_error")}),
        (None, {"fields": ("reason", "base_version")}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        return access.restrict(super().get_queryset(request), request.user).select_related(
            "space", "stats"
        )

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None):
        return super().changelist_view(request, {"title": "Memories", **(extra_context or {})})

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Memory],
                           search_term: str) -> tuple[QuerySet[Memory], bool]:
        if not search_term.strip():
            return queryset, False
        filters = selectors.MemoryFilters(text=search_term, archived=None)
        found = selectors.memory_list(actor=request.user, filters=filters).values("pk")
        return queryset.filter(pk__in=found), False

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "space":
            kwargs["queryset"] = access.spaces_visible(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="confidence", ordering="stats__confidence")
    def confidence(self, memory: Memory) -> str:
        return f"{memory.stats.confidence:.2f}"

    @admin.display(description="kind", ordering="kind")
    def kind_shown(self, memory: Memory) -> str:
        return label(memory.kind)

    @admin.display(description="state", ordering="archived")
    def state(self, memory: Memory) -> str:
        """Archived or active, and the embedding when it is not ready (recall cannot find it yet)."""
        state = "archived" if memory.archived else "active"
        if memory.embedding_status != EmbeddingStatus.READY:
            state += f", embedding {memory.embedding_status}"
        return state

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, memory: Memory) -> str:
        return localtime(memory.updated_at).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="usage count")
    def usage_count(self, memory: Memory) -> int:
        return memory.stats.usage_count

    @admin.display(description="access count")
    def access_count(self, memory: Memory) -> int:
        return memory.stats.access_count

    @admin.display(description="last accessed")
    def last_accessed_at(self, memory: Memory) -> str:
        return readable(memory.stats.last_accessed_at and localtime(memory.stats.last_accessed_at))

    # Writes go through services so the admin keeps the same rules and history as the API.
    def save_model(self, request: HttpRequest, obj: Memory, form: MemoryAdminForm, change: bool) -> None:
        data = form.entry_data()
        if change:
            data.pop("space", None)
            saved = services.memory_update(
                actor=request.user, memory_id=obj.pk,
                expected_version=form.cleaned_data.get("base_version") or obj.version,
                changes=data, reason=form.cleaned_data.get("reason") or "edited in admin",
            )
        else:
            saved = services.memory_create(actor=request.user, data=data)
            if saved.reinforced:
                messages.info(request, "The space holds this text already: that memory was reinforced "
                                       "(confidence +0.02) instead of adding a second one.")
        obj.pk = saved.instance.pk
        obj.version = saved.instance.version
        obj._state.adding = False

    def save_related(self, request, form, formsets, change) -> None:
        # Versions are written by the services; edges go through the graph's service.
        for formset in formsets:
            if formset.model is MemoryRelation:
                save_relations(request, form.instance, formset)

    def delete_model(self, request: HttpRequest, obj: Memory) -> None:
        services.memory_delete(actor=request.user, memory_id=obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        for memory_id in queryset.values_list("pk", flat=True):
            services.memory_delete(actor=request.user, memory_id=memory_id)

    @admin.action(description="Archive selected memories")
    def archive_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        changed = sum(
            bool(services.memory_archive(actor=request.user, memory_id=pk,
                                         reason="archived in admin").changelog)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Archived {changed} memories.", messages.SUCCESS)

    @admin.action(description="Restore selected memories from the archive")
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        changed = sum(
            bool(services.memory_unarchive(actor=request.user, memory_id=pk,
                                           reason="restored in admin").changelog)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Restored {changed} memories.", messages.SUCCESS)

    @admin.action(description="Export selected memories (SAM JSONL, for sam_import)")
    def export_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> StreamingHttpResponse:
        """A person's data, say: filter by "about user", select all, export. Audited as an export."""
        rows = transfer.memories_export(actor=request.user, spaces=[], include_archived=True,
                                        within=queryset)
        response = StreamingHttpResponse((json.dumps(row, default=str) + "\n" for row in rows),
                                         content_type="application/x-ndjson")
        response["Content-Disposition"] = 'attachment; filename="sam-memories.jsonl"'
        return response

    @admin.action(description="Merge selected memories into one")
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[Memory]):
        """Ask which memory to keep, then merge the others into it (memories.lifecycle.curation)."""
        chosen = sorted(queryset, key=lambda m: (-m.stats.confidence, -m.updated_at.timestamp(), m.pk))
        if len(chosen) < 2:
            self.message_user(request, "Select at least two memories to merge.", messages.WARNING)
            return None
        if "apply" in request.POST:
            target_id = request.POST.get("target", "")
            sources = [m.pk for m in chosen if m.pk != target_id]
            target = next((m for m in chosen if m.pk == target_id), None)
            if target is None:
                self.message_user(request, "Choose the memory to keep.", messages.ERROR)
            else:
                try:
                    result = curation.memory_merge(
                        actor=request.user, target_id=target.pk, source_ids=sources,
                        expected_version=target.version, reason=request.POST.get("reason", "").strip())
                except DomainError as exc:
                    fields = "; ".join(f"{k}: {' '.join(v)}" for k, v in (exc.fields or {}).items())
                    self.message_user(request, f"{exc.message} {fields}".strip(), messages.ERROR)
                else:
                    note = f" ({', '.join(result.dropped)} over the limits stay in the archived ones)" \
                        if result.dropped else ""
                    merged = result.write.instance
                    self.message_user(request, f"Merged {len(result.merged)} memories into "
                                      f"'{merged.title}' (now version {merged.version}){note}.",
                                      messages.SUCCESS)
                return None
        context = {**self.admin_site.each_context(request), "title": "Merge memories", "memories": chosen,
                   "opts": self.model._meta, "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME}
        return TemplateResponse(request, "admin/memories/memory/merge_selected.html", context)

    def get_urls(self):
        custom = [
            path(
                "<path:object_id>/timeline/",
                self.admin_site.admin_view(self.timeline_view),
                name="memories_memory_timeline",
            ),
            path(
                "<path:object_id>/versions/<int:version>/restore/",
                self.admin_site.admin_view(self.restore_version_view),
                name="memories_memory_restore_version",
            ),
        ]
        return custom + super().get_urls()

    def timeline_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Everything the audit chain holds about the memory, newest first (who may audit it)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        memory_id = unquote(object_id)
        back = reverse("admin:memories_memory_change", args=[quote(memory_id)])
        try:
            timeline = audit_selectors.memory_timeline(actor=request.user, memory_id=memory_id,
                                                       filters=audit_selectors.TimelineFilters())
            events = timeline[0:TIMELINE_EVENTS]
        except DomainError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(back)
        memory = self.get_object(request, memory_id)
        context = {**self.admin_site.each_context(request),
                   "title": f"Audit timeline: {memory.title if memory else memory_id}",
                   "opts": self.model._meta, "memory_id": memory_id, "memory_url": back, "original": memory,
                   "rows": timeline_rows(list(events)), "shown": len(events), "total": timeline.count()}
        return TemplateResponse(request, "admin/memories/memory/timeline.html", context)

    def restore_version_view(self, request: HttpRequest, object_id: str, version: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_change_permission(request):
            messages.error(request, "You may not change memories.")
        else:
            try:
                restored = services.memory_version_restore(
                    actor=request.user, memory_id=unquote(object_id), version=version
                )
            except DomainError as exc:
                messages.error(request, exc.message)
            else:
                note = (f"now version {restored.instance.version}" if restored.changelog
                        else "it already matched")
                messages.success(request, f"Restored version {version} ({note}).")
        return HttpResponseRedirect(reverse("admin:memories_memory_change", args=[quote(unquote(object_id))]))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = extra_context or {}
        # The URL carries the admin-quoted id ("_" becomes "_5F"), as Django's own views expect.
        memory = self.get_object(request, unquote(object_id))
        if memory is not None:
            # Headed by what the memory says, not by str() (kind and id: see Memory.__str__).
            extra_context["title"] = memory.title
            archived = " · archived" if memory.archived else ""
            extra_context["subtitle"] = (f"{label(memory.kind)} in {memory.space.slug} · "
                                         f"version {memory.version}{archived}")
            extra_context["memory_versions"] = version_rows(
                memory.versions.select_related("actor").order_by("-version"))
            # Relations either way, only where the other end is visible too.
            visible = access.restrict(Memory.objects.all(), request.user).values("pk")
            extra_context["memory_relations"] = [
                *(("→", r.get_relation_type_display().lower(), r.target, r)
                  for r in memory.relations_out.filter(target__in=visible).select_related("target")),
                *(("←", r.get_relation_type_display().lower(), r.source, r)
                  for r in memory.relations_in.filter(source__in=visible).select_related("source")),
            ]
        return super().change_view(request, object_id, form_url, extra_context)


# The sub-areas register their admins in their own packages (autodiscovery imports only this one).
from memories.capture import admin as capture_admin  # noqa: E402, F401
from memories.categories import admin as categories_admin  # noqa: E402, F401
from memories.entities import admin as entities_admin  # noqa: E402, F401
from memories.lifecycle import admin as lifecycle_admin  # noqa: E402, F401
