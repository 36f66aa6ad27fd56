"""API tokens in the admin: list, revoke. Issue new ones with `manage.py sam_token`."""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model

from governance import access, services
from governance.models import ApiToken, DataKey, RestrictedTag, SpaceMembership, UserMemorySettings
from governance.services import api_token_revoke


class VisibleSpaceFilter(admin.RelatedFieldListFilter):
    """A list filter on a `space` foreign key that offers only the spaces the reader may
    see: the default one lists every space to any staff user, naming spaces they cannot
    open. Use as `list_filter = (("space", VisibleSpaceFilter), ...)`."""

    def field_choices(self, field, request, model_admin):
        return [(space.pk, space.slug)
                for space in access.spaces_visible(request.user).order_by("slug")]


class CuratorsChange:
    """A ModelAdmin mixin for rows of one space (`obj.space`): anyone who may see them reads
    them; only curators (and owners) of that space change or delete them."""

    def _curates(self, request, obj) -> bool:
        return obj is None or access.can(request.user, "curate", obj.space)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._curates(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._curates(request, obj)  # type: ignore[misc]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "role", "prefix", "created_at", "expires_at", "revoked_at",
                    "last_used_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at",
                       "role", "all_spaces", "spaces")
    fields = (*readonly_fields, "expires_at")
    actions = ("revoke_selected",)

    def has_add_permission(self, request) -> bool:
        # The plaintext is shown once; the command line is where it can be shown safely.
        return False

    def get_queryset(self, request):
        # Staff other than superusers see and revoke their own tokens only: other people's
        # token names and scopes name their spaces.
        queryset = super().get_queryset(request).select_related("user")
        if access.sees_everything(request.user):
            return queryset
        return queryset.filter(user=request.user)

    def save_model(self, request, obj: ApiToken, form, change: bool) -> None:
        # expires_at is the one editable field; the service audits the change.
        services.api_token_set_expiry(token=obj, expires_at=form.cleaned_data.get("expires_at"),
                                      actor=request.user)

    def save_related(self, request, form, formsets, change) -> None:
        # Every other field is read-only, spaces included; nothing else to save.
        return None

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request, queryset) -> None:
        for token in queryset:
            api_token_revoke(token=token, actor=request.user)
        self.message_user(request, f"Revoked {queryset.count()} tokens.", messages.SUCCESS)


# --- memberships, restricted tags and keys, shown inside the space admin ---------------

class SpaceMembershipInline(admin.TabularInline):
    """Roles in a space. Saved through governance.services, which keeps guardian's
    permissions in step and audits every grant and revoke."""

    model = SpaceMembership
    fk_name = "space"
    extra = 0
    fields = ("user", "group", "role", "granted_by", "updated_at")
    readonly_fields = ("granted_by", "updated_at")
    autocomplete_fields = ("user", "group")


class RestrictedTagInline(admin.TabularInline):
    model = RestrictedTag
    extra = 0
    fields = ("tag", "min_role", "created_at")
    readonly_fields = ("created_at",)


def save_governance_formset(request, formset) -> bool:
    """Route inline edits of memberships and restricted tags through the services.

    Returns True when the formset was one of ours (and is saved)."""
    model = formset.model
    if model not in (SpaceMembership, RestrictedTag):
        return False
    formset.save(commit=False)
    actor = request.user
    for obj in formset.deleted_objects:
        if model is SpaceMembership:
            services.membership_revoke(actor=actor, space=obj.space, user=obj.user, group=obj.group)
        else:
            services.restricted_tag_remove(actor=actor, space=obj.space, tag=obj.tag)
    for obj in [*formset.new_objects, *(o for o, _ in formset.changed_objects)]:
        if model is SpaceMembership:
            if obj.pk:
                # A changed principal is a revoke of the old one and a grant to the new one.
                old = SpaceMembership.objects.get(pk=obj.pk)
                if (old.user_id, old.group_id) != (obj.user_id, obj.group_id):
                    services.membership_revoke(actor=actor, space=old.space, user=old.user,
                                               group=old.group)
            services.membership_grant(actor=actor, space=obj.space, role=obj.role,
                                      user=obj.user, group=obj.group)
        else:
            services.restricted_tag_set(actor=actor, space=obj.space, tag=obj.tag,
                                        min_role=obj.min_role)
    return True


@admin.register(DataKey)
class DataKeyAdmin(admin.ModelAdmin):
    """Read-only: keys are created, rotated and destroyed by SAM and `manage.py sam_keys`."""

    list_display = ("id", "space", "state", "master_key_id", "created_at", "retired_at")
    list_filter = ("state", "master_key_id")
    fields = ("space", "state", "master_key_id", "created_at", "retired_at")
    readonly_fields = fields

    def get_queryset(self, request):
        # Keys of the spaces the reader may see; space-less (system) keys are for superusers.
        queryset = super().get_queryset(request).select_related("space")
        if access.sees_everything(request.user):
            return queryset
        return access.restrict(queryset, request.user)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(UserMemorySettings)
class UserMemorySettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "mode", "updated_at")
    list_filter = ("mode",)
    autocomplete_fields = ("user",)

    # Staff other than superusers see and set their own mode only.
    def get_queryset(self, request):
        queryset = super().get_queryset(request).select_related("user")
        if access.sees_everything(request.user):
            return queryset
        return queryset.filter(user=request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not access.sees_everything(request.user):
            kwargs["queryset"] = get_user_model().objects.filter(pk=request.user.pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change) -> None:
        services.user_mode_set(actor=request.user, user=obj.user, mode=obj.mode)
