"""The My memory page's views: a form -> one selector or service call -> a template.

The same selectors and services as the REST API (memories/api/me.py, memories/api/views.py,
governance/api/views.py, memories/capture/api.py), so the page meets the same permission
checks, memory modes and audit. A memory or import the person may not see is a 404, exactly
like one that does not exist; one they may see but not change is a 403.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import AdminSite
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.errors import DomainError, Forbidden, NotFound, VersionConflict
from governance import access
from governance import services as governance_services
from governance import spaces as space_services
from memories import selectors, services
from memories.capture import jobs, transfer
from memories.capture import selectors as import_selectors
from memories.me import forms
from memories.me import services as me_services

PAGE_SIZE = 25
# Memories shown per kind group on the overview; the group's own page lists them all.
OVERVIEW_PER_GROUP = 5
GROUP_TITLES = {"fact": "Facts", "preference": "Preferences", "style": "Style", "topic": "Topics",
                "summary": "Summaries", "knowledge": "Knowledge (decisions, solutions, standards…)"}


def _render(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    # The admin's header, so the page reads as the admin does; SAM rather than Django's own
    # default, which would tell a person nothing. (Titles say SAM: templates/me/base.html.)
    header = admin.site.site_header
    context = {"site_header": header if header != AdminSite.site_header else "SAM", **context}
    return render(request, template, context, status=status)


def _found(call: Any) -> Any:
    """A selector's or service's answer; NotFound as 404, Forbidden as 403."""
    try:
        return call()
    except NotFound as error:
        raise Http404(error.message) from error
    except Forbidden as error:
        raise PermissionDenied(error.message) from error


def _posted(request: HttpRequest) -> Any:
    """The form's data on a POST, even an empty one (then unbound on a GET)."""
    return request.POST if request.method == "POST" else None


def _form_errors(form: Any, error: DomainError) -> None:
    """A service's refusal on the form: its message above, each field's messages under the field."""
    form.add_error(None, error.message)
    for name, problems in error.fields.items():
        if name in form.fields:
            for problem in problems:
                form.add_error(name, problem)


# --- what SAM knows about me ----------------------------------------------------------------

def _group_counts(request: HttpRequest) -> dict[str, int]:
    rows = (selectors.memory_list(actor=request.user, filters=selectors.MemoryFilters(about_me=True))
            .order_by().values("kind").annotate(n=Count("id")))
    counts: Counter[str] = Counter()
    for row in rows:
        counts[selectors.kind_group_of(row["kind"])] += row["n"]
    return {group: counts[group] for group in selectors.KIND_GROUPS}


def _listed(request: HttpRequest, filters: selectors.MemoryFilters) -> Any:
    # With who wrote each, which every card shows.
    return selectors.memory_list(actor=request.user, filters=filters).select_related("created_by")


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    group = request.GET.get("kind_group") or None
    if group is not None and group not in selectors.KIND_GROUPS:
        raise Http404("No such kind group.")
    counts = _group_counts(request)
    groups = [{"name": name, "title": GROUP_TITLES[name], "count": counts[name]}
              for name in selectors.KIND_GROUPS]
    context: dict[str, Any] = {"title": "My memory", "groups": groups, "group": group,
                               "total": sum(counts.values())}
    if group is None:
        # The overview: each kind group's newest few, with a link to the rest.
        sections = []
        for entry in groups:
            if entry["count"]:
                filters = selectors.MemoryFilters(about_me=True, kind_group=str(entry["name"]))
                rows = _listed(request, filters)[:OVERVIEW_PER_GROUP]
                sections.append({**entry, "memories": list(rows)})
        context["sections"] = sections
    else:
        filters = selectors.MemoryFilters(about_me=True, kind_group=group)
        page = Paginator(_listed(request, filters), PAGE_SIZE)
        context["page"] = page.get_page(request.GET.get("page"))
        context["group_title"] = GROUP_TITLES[group]
    return _render(request, "me/home.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def memory_edit(request: HttpRequest, memory_id: str) -> HttpResponse:
    memory = _found(lambda: selectors.my_memory_get(actor=request.user, memory_id=memory_id))
    initial = {"version": memory.version, "title": memory.title, "content": memory.content,
               "summary": memory.summary, "tags": ", ".join(memory.tags)}
    form = forms.MemoryEditForm(_posted(request), initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            result = _found(lambda: services.memory_update(
                actor=request.user, memory_id=memory.id, expected_version=form.cleaned_data["version"],
                changes=form.changes(), reason=form.cleaned_data["reason"]))
        except VersionConflict as error:
            form.add_error(None, f"This memory changed since you opened it: it is at version "
                                 f"{error.current} now. Reload the page to edit that version.")
        except DomainError as error:
            _form_errors(form, error)
        else:
            if not result.persisted:
                messages.warning(request, "Incognito: SAM answered the correction but kept nothing.")
            elif result.changelog:
                messages.success(request, f"Saved as version {result.instance.version}.")
            else:
                messages.info(request, "Nothing changed.")
            return redirect("me-memory-edit", memory_id=memory.id)
    versions = _found(lambda: selectors.memory_version_list(actor=request.user, memory_id=memory.id))
    return _render(request, "me/memory_edit.html",
                   {"title": "Correct a memory", "memory": memory, "form": form, "versions": versions},
                   status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def memory_delete(request: HttpRequest, memory_id: str) -> HttpResponse:
    memory = _found(lambda: selectors.my_memory_get(actor=request.user, memory_id=memory_id))
    if request.method == "POST":
        try:
            kept = _found(lambda: services.memory_delete(actor=request.user, memory_id=memory.id))
        except DomainError as error:  # the memory mode refuses writes now
            messages.error(request, error.message)
            return redirect("me-memory-delete", memory_id=memory.id)
        if kept:
            messages.success(request, f"Deleted “{memory.title}”.")
        else:
            messages.warning(request, f"Incognito: “{memory.title}” was not deleted (nothing is changed).")
        return redirect("me-home")
    return _render(request, "me/memory_delete.html", {"title": "Delete a memory", "memory": memory})


# --- modes ------------------------------------------------------------------------------------

@require_GET
@login_required
def modes(request: HttpRequest) -> HttpResponse:
    spaces = [{"space": space, "manage": access.can(request.user, "manage", space),
               "form": forms.ModeForm(initial={"mode": space.mode}, prefix=space.slug)}
              for space in selectors.space_list(actor=request.user)]
    mine = forms.ModeForm(initial={"mode": governance_services.user_mode_get(user=request.user)}, prefix="me")
    return _render(request, "me/modes.html", {"title": "Memory modes", "spaces": spaces, "mine": mine})


@require_POST
@login_required
def my_mode_set(request: HttpRequest) -> HttpResponse:
    form = forms.ModeForm(request.POST, prefix="me")
    if not form.is_valid():
        messages.error(request, "Choose one of the modes.")
        return redirect("me-modes")
    row = governance_services.user_mode_set(actor=request.user, user=request.user,
                                            mode=form.cleaned_data["mode"])
    messages.success(request, f"Your own mode is {row.get_mode_display()}.")
    return redirect("me-modes")


@require_POST
@login_required
def space_mode_set(request: HttpRequest, slug: str) -> HttpResponse:
    form = forms.ModeForm(request.POST, prefix=slug)
    if not form.is_valid():
        messages.error(request, "Choose one of the modes.")
        return redirect("me-modes")
    space = _found(lambda: space_services.space_update(actor=request.user, slug=slug,
                                                       changes={"mode": form.cleaned_data["mode"]}))
    messages.success(request, f"Space “{space.name}” is {space.get_mode_display()}.")
    return redirect("me-modes")


# --- export, forget ---------------------------------------------------------------------------

@require_GET
@login_required
def export(request: HttpRequest) -> HttpResponse:
    return _render(request, "me/export.html", {"title": "Take it with you",
                                               "file_name": transfer.ABOUT_ME_FILE_NAME})


@require_GET
@login_required
def export_download(request: HttpRequest) -> StreamingHttpResponse:
    include_archived = request.GET.get("include_archived", "true") != "false"
    lines = transfer.about_me_lines(actor=request.user, include_archived=include_archived)
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{transfer.ABOUT_ME_FILE_NAME}"'
    return response


@require_http_methods(["GET", "POST"])
@login_required
def forget(request: HttpRequest) -> HttpResponse:
    form = forms.ForgetForm(_posted(request))
    if request.method == "POST" and form.is_valid():
        result = _found(lambda: me_services.forget_me(
            actor=request.user, written_elsewhere=form.cleaned_data["written_elsewhere"]))
        # Answered here, not redirected: the receipts are shown once, as the API answers them.
        receipts = [{**receipt, "rows": [(name.replace("_", " ").capitalize(), count)
                                         for name, count in receipt["deleted"].items()]}
                    for receipt in result.receipts]
        return _render(request, "me/forgotten.html", {"title": "Forgotten", "result": result,
                                                      "receipts": receipts})
    preview = me_services.forget_preview(actor=request.user)
    return _render(request, "me/forget.html", {"title": "Forget everything about me", "form": form,
                                               "preview": preview}, status=400 if form.errors else 200)


# --- imports ----------------------------------------------------------------------------------

def _writable_spaces(request: HttpRequest) -> list[Any]:
    return [space for space in selectors.space_list(actor=request.user)
            if access.can(request.user, "write", space)]


@require_http_methods(["GET", "POST"])
@login_required
def imports(request: HttpRequest) -> HttpResponse:
    spaces = _writable_spaces(request)
    choices = [(space.slug, f"{space.name} ({space.slug}) — accepts: "
                            f"{', '.join(space.capture_sources) or 'nothing yet'}") for space in spaces]
    form = forms.UploadForm(_posted(request), request.FILES or None, spaces=choices)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if data["allow_source"]:
                me_services.import_source_allow(actor=request.user, slug=data["space"], source=data["source"])
            chat_import = jobs.chat_import_create(actor=request.user, space_slug=data["space"],
                                                  source=data["source"], upload=data["file"])
        except DomainError as error:  # 404, 403, 409 and 400 alike: said on the form
            _form_errors(form, error)
        else:
            messages.success(request, f"“{chat_import.file_name}” is uploaded and queued for import.")
            return redirect("me-import", import_id=chat_import.pk)
    return _render(request, "me/imports.html",
                   {"title": "My imports", "form": form, "has_spaces": bool(spaces),
                    "imports": import_selectors.chat_import_list(actor=request.user)},
                   status=400 if form.errors else 200)


@require_GET
@login_required
def import_detail(request: HttpRequest, import_id: str) -> HttpResponse:
    chat_import = _found(lambda: import_selectors.chat_import_get(actor=request.user, import_id=import_id))
    report = chat_import.report or {}
    return _render(request, "me/import_detail.html", {
        "title": f"Import of {chat_import.file_name}", "chat_import": chat_import, "report": report,
        "home_url": reverse("me-home")})
