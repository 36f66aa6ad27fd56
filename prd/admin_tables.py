"""What the prd app's admin pages share: read-only model admins and plain HTML tables."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable, never added, changed or deleted here."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def html_table(headers: tuple[str, ...], rows) -> str:
    head = format_html_join("", "<th>{}</th>", ((h,) for h in headers))
    body = format_html_join("", "<tr>{}</tr>", (
        (format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows
    ))
    return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)
