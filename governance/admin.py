"""Governance in the admin: API tokens (issue your own, list, revoke), memberships and
restricted tags inside the space admin, data keys, memory modes."""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import reverse

from governance import access, services, tokens
from governance.forms import TokenIssueForm
from governance.models import ApiToken, DataKey, RestrictedTag, SpaceMembership, UserMemorySettings


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
    """API tokens: every staff user issues and revokes their own here (the secret is shown
    once, on the page that answers the add form); superusers, and staff given
    `governance.revoke_any_token`, see and revoke everyone's. Issuing and revoking go through
    governance.tokens, which checks and audits them."""

    list_display = ("name", "user", "prefix", "spaces_shown", "role_shown", "scopes_shown", "expires_at",
                    "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at",
                       "role", "scopes", "all_spaces", "spaces")
    fields = (*readonly_fields, "expires_at")
    actions = ("revoke_selected",)

    def _staff(self, request) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_module_permission(self, request) -> bool:
        return self._staff(request)

    def has_view_permission(self, request, obj=None) -> bool:
        # Which tokens, get_queryset decides: a user who may not revoke any sees their own.
        return self._staff(request)

    def has_add_permission(self, request) -> bool:
        return self._staff(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._staff(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        # Tokens are revoked, never deleted: their audit trail names them.
        return False

    def get_queryset(self, request):
        return tokens.manageable_tokens(actor=request.user)

    @admin.display(description="spaces")
    def spaces_shown(self, token: ApiToken) -> str:
        return "all" if token.all_spaces else ", ".join(s.slug for s in token.spaces.all()) or "none left"

    @admin.display(description="role")
    def role_shown(self, token: ApiToken) -> str:
        return token.role or "own"

    @admin.display(description="scopes")
    def scopes_shown(self, token: ApiToken) -> str:
        return ", ".join(token.scopes)

    def add_view(self, request, form_url="", extra_context=None):
        """The issue form; on success, the secret on the page that answers it, and never again."""
        form = TokenIssueForm(request.POST or None, user=request.user)
        issued = form.issue() if request.method == "POST" and form.is_valid() else None
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
            "title": "Your new API token" if issued else "Issue yourself an API token",
            "token": issued[0] if issued else None, "secret": issued[1] if issued else None,
            "changelist_url": reverse("admin:governance_apitoken_changelist"),
        }
        response = TemplateResponse(request, "admin/governance/apitoken/issue.html", context)
        response["Cache-Control"] = "no-store"  # the secret must not stay in a cache
        return response

    def save_model(self, request, obj: ApiToken, form, change: bool) -> None:
        # expires_at is the one editable field; the service audits the change.
        tokens.api_token_set_expiry(token=obj, expires_at=form.cleaned_data.get("expires_at"),
                                    actor=request.user)

    def save_related(self, request, form, formsets, change) -> None:
        # Every other field is read-only, spaces included; nothing else to save.
        return None

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request, queryset) -> None:
        revoked = 0
        for token in queryset:
            was_usable = token.revoked_at is None
            tokens.token_revoke(actor=request.user, token_id=token.pk, anyones=True)
            revoked += was_usable
        self.message_user(request, f"Revoked {revoked} token{pluralize(revoked)}.", messages.SUCCESS)


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
