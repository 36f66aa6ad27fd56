"""Categories in the admin: curators see each space's topics with their summaries and change
their descriptions and keywords, through memories.categories (audited; memories placed again)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.postgres.forms import SimpleArrayField
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from governance import access
from governance.admin import VisibleSpaceFilter
from memories import categories
from memories.models import Category
from samsite.core.errors import DomainError


class CategoryAdminForm(forms.ModelForm):
    keywords = SimpleArrayField(forms.CharField(max_length=40), help_text="Comma-separated words.")

    class Meta:
        model = Category
        fields = ("space", "name", "display_name", "description", "keywords")


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    form = CategoryAdminForm
    list_display = ("display_name", "name", "space", "item_count", "builtin", "summary_updated_at")
    list_filter = (("space", VisibleSpaceFilter), "builtin")
    list_select_related = ("space",)
    readonly_fields = ("builtin", "item_count", "summary_view", "summary_updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return access.restrict(super().get_queryset(request), request.user)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A category's space and name are what it is; change them by making another.
        return (*self.readonly_fields, "space", "name") if obj else self.readonly_fields

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "space":
            kwargs["queryset"] = access.spaces_visible(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="summary")
    def summary_view(self, category: Category) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", category.summary or "—")

    def save_model(self, request: HttpRequest, obj: Category, form: CategoryAdminForm, change: bool) -> None:
        data = form.cleaned_data
        try:
            if change:
                saved = categories.category_update(
                    actor=request.user, space_slug=obj.space.slug, name=obj.name,
                    changes={k: data[k] for k in ("display_name", "description", "keywords")})
            else:
                saved = categories.category_create(
                    actor=request.user, space_slug=data["space"].slug, name=data["name"],
                    display_name=data["display_name"], description=data["description"],
                    keywords=data["keywords"])
        except DomainError as exc:
            messages.error(request, exc.message)
            return
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: Category) -> None:
        categories.category_delete(actor=request.user, space_slug=obj.space.slug, name=obj.name)
