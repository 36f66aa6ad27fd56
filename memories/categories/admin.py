"""Categories in the admin: curators see each space's topics and change their descriptions
and keywords, through memories.categories.services (audited; the space's memories placed again).
Only curators (and owners) of a category's space may add, change or delete it."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.postgres.forms import SimpleArrayField
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import DomainError
from governance import access
from governance.admin import CuratorsChange, VisibleSpaceFilter
from memories.categories import services as categories
from memories.models import Category


class CategoryAdminForm(forms.ModelForm):
    keywords = SimpleArrayField(forms.CharField(max_length=40), help_text="Comma-separated words.")

    class Meta:
        model = Category
        fields = ("space", "name", "display_name", "description", "keywords")


@admin.register(Category)
class CategoryAdmin(CuratorsChange, admin.ModelAdmin):
    form = CategoryAdminForm
    list_display = ("display_name", "name", "space", "builtin")
    list_filter = (("space", VisibleSpaceFilter), "builtin")
    list_select_related = ("space",)
    readonly_fields = ("builtin",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return access.restrict(super().get_queryset(request), request.user)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A category's space and name are what it is; change them by making another.
        return (*self.readonly_fields, "space", "name") if obj else self.readonly_fields

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "space":
            kwargs["queryset"] = access.spaces_visible(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

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
            raise PermissionDenied(exc.message) from exc
        obj.pk = saved.category.pk

    def delete_model(self, request: HttpRequest, obj: Category) -> None:
        try:
            categories.category_delete(actor=request.user, space_slug=obj.space.slug, name=obj.name)
        except DomainError as exc:
            raise PermissionDenied(exc.message) from exc

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Category]) -> None:
        # Each through the service: the curate check and the audit, as for one.
        for category in queryset.select_related("space"):
            self.delete_model(request, category)
