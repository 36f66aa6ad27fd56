"""API tokens in the admin: list, revoke. Issue new ones with `manage.py sam_token`."""

from django.contrib import admin, messages

from governance.models import ApiToken
from governance.services import api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created_at", "expires_at", "revoked_at", "last_used_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at")
    fields = (*readonly_fields, "expires_at")
    actions = ("revoke_selected",)

    def has_add_permission(self, request) -> bool:
        # The plaintext is shown once; the command line is where it can be shown safely.
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request, queryset) -> None:
        for token in queryset:
            api_token_revoke(token=token)
        self.message_user(request, f"Revoked {queryset.count()} tokens.", messages.SUCCESS)
