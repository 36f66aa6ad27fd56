"""The recall inspector and the micro-training panel of a memory, in the admin
(docs/lifecycle.md, "Micro-training"; docs/recall.md): where does this memory rank for a
query, for which past queries did it come back, and do its training examples pass.

They live here, with recall, and the memory's page links to them: the memories app sits
below recall and never runs it.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.errors import DomainError
from governance import access
from memories.models import Memory
from retrieval import pipeline, presenters, services, training
from retrieval.context import RecallContext
from retrieval.models import RecallEvent, TrainingRun

INSPECT_K = 20
PAST_QUERIES = 10
NO_THRESHOLDS = {"similarity": 0.0, "composite_min": 0.0}


@admin.register(TrainingRun)
class TrainingRunAdmin(admin.ModelAdmin):
    list_display = ("memory", "ran_at", "passed", "examples", "pass_rate", "suggested")
    list_filter = ("suggested",)
    search_fields = ("=memory__id",)
    search_help_text = "An exact memory id."
    list_select_related = ("memory",)
    readonly_fields = ("memory", "ran_at", "examples", "passed", "pass_rate", "suggested", "results")
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[TrainingRun]:
        visible = access.restrict(Memory.objects.all(), request.user).values("pk")
        return super().get_queryset(request).filter(memory__in=visible)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_urls(self):
        return [
            path("inspect/<path:memory_id>/", self.admin_site.admin_view(self.inspect_view),
                 name="retrieval_trainingrun_inspect"),
            *super().get_urls(),
        ]

    def inspect_view(self, request: HttpRequest, memory_id: str) -> HttpResponse:
        memory_id = unquote(memory_id)
        try:
            memory = access.access_object(Memory.objects.select_related("space"), request.user, pk=memory_id,
                                          label="memory")
        except DomainError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(reverse("admin:memories_memory_changelist"))
        here = reverse("admin:retrieval_trainingrun_inspect", args=[quote(memory.pk)])
        query = (request.POST.get("query") or request.GET.get("query") or "").strip()[:2000]
        if request.method == "POST" and "run_training" in request.POST:
            try:
                access.access_object(Memory.objects.all(), request.user, pk=memory.pk, action="edit",
                                     label="memory")
                run = training.run_memory(memory, actor=request.user)
            except DomainError as exc:
                messages.error(request, exc.message)
            else:
                if run is None:
                    messages.warning(request, f"Space '{memory.space.slug}' keeps memories out of recall "
                                              "now: nothing to test.")
                else:
                    messages.success(request, f"Training examples: {run.passed} of {run.examples} passed.")
            return HttpResponseRedirect(here)
        ranking = None
        if query:
            # No thresholds: where it *would* rank, even below what recall returns.
            request_ = pipeline.RecallRequest(context=RecallContext(query=query), spaces=(memory.space.slug,),
                                              k=INSPECT_K, thresholds=NO_THRESHOLDS)
            # Audited like every recall; untracked: an inspection is not a use of the memory.
            result = services.recall_run(actor=request.user, request=request_, track=False).instance
            ids = [item.id for item in result.items]
            ranking = {
                "rank": ids.index(memory.pk) + 1 if memory.pk in ids else None,
                "top": [presenters.inspected_rank(item, memory_id=memory.pk) for item in result.items[:10]],
            }
        examples, suggested = training.examples_of(memory)
        context = {
            **self.admin_site.each_context(request), "title": f"Recall inspector: {memory.title}",
            "memory": memory, "query": query, "ranking": ranking, "k": INSPECT_K,
            "examples": examples, "suggested": suggested, "runs": memory.training_runs.all()[:10],
            "past_queries": self._past_queries(request, memory),
            "memory_url": reverse("admin:memories_memory_change", args=[quote(memory.pk)]),
            "opts": TrainingRun._meta,
        }
        return TemplateResponse(request, "admin/retrieval/inspect.html", context)

    def _past_queries(self, request: HttpRequest, memory: Memory) -> list[dict] | None:
        """Tracked recalls that returned the memory, newest first, with its rank in each; None
        for a reader who may not audit the space (what others asked is theirs)."""
        if not access.can(request.user, "audit", memory.space):
            return None
        events = (RecallEvent.objects.filter(memory_ids__contains=[memory.pk],
                                             spaces__contains=[memory.space.slug])
                  .order_by("-created_at")[:PAST_QUERIES])
        return [{"at": e.created_at, "query": e.query_text, "rank": e.memory_ids.index(memory.pk) + 1}
                for e in events]
