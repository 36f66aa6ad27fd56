"""Reads of chat imports, as the caller may see them, and how far their memories are."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from core.actor import Actor
from core.errors import NotFound
from governance import access
from memories.capture.models import ChatImport, ChatImportStatus, ImportedMemory
from memories.models import EmbeddingStatus


def chat_import_get(*, actor: Actor, import_id: str) -> ChatImport:
    """An import, for who uploaded it or the space's owners, while they still read its space;
    to anyone else it does not exist (NotFound). It carries its `progress` (import_progress)."""
    # Through the gateway: only imports of spaces the caller still reads, then only their own
    # (or any, for the space's owners).
    visible = access.restrict(ChatImport.objects.select_related("space"), actor)
    chat_import = visible.filter(pk=import_id).first()
    mine = chat_import is not None and chat_import.created_by_id == getattr(actor, "pk", None)
    if chat_import is None or not (mine or access.can(actor, "manage", chat_import.space)):
        raise NotFound(f"No chat import '{import_id}'.")
    return with_progress(chat_import)


def chat_import_list(*, actor: Actor, limit: int = 50) -> list[ChatImport]:
    """The `limit` newest imports `actor` uploaded, of spaces they still read, each with its
    `progress` (a query per import for it, so the list is bounded)."""
    visible = access.restrict(ChatImport.objects.select_related("space"), actor)
    mine = visible.filter(created_by_id=getattr(actor, "pk", None)).order_by("-created_at")[:limit]
    return [with_progress(chat_import) for chat_import in mine]


@dataclass(frozen=True)
class ImportProgress:
    """What is still to happen to an import's memories before they are final.

    Extraction is the import itself (the job, for an upload). Then each memory it created
    waits for its embedding, and once embedded for its write checks (a repeated fact
    reinforces, a changed one supersedes: docs/lifecycle.md). A memory whose embedding
    failed never gets its checks until it is embedded again (`sam_reembed`): it is counted
    under `embedding_failed`, not as pending, so an import with one still becomes final.
    """

    extraction_done: bool
    memories: int
    embedding_pending: int
    embedding_failed: int
    checks_pending: int

    @property
    def final(self) -> bool:
        return self.extraction_done and not self.embedding_pending and not self.checks_pending

    def as_dict(self) -> dict[str, object]:
        return {"extraction_done": self.extraction_done, "memories": self.memories,
                "pending": {"embedding": self.embedding_pending, "checks": self.checks_pending},
                "embedding_failed": self.embedding_failed, "final": self.final}


def import_progress(*, import_id: str, extraction_done: bool = True) -> ImportProgress:
    """Counts over the memories recorded under `import_id` (ingest records them as it writes)."""
    status = "memory__embedding_status"
    counts = ImportedMemory.objects.filter(import_id=import_id).aggregate(
        memories=Count("pk"),
        embedding_pending=Count("pk", filter=Q(**{status: EmbeddingStatus.PENDING})),
        embedding_failed=Count("pk", filter=Q(**{status: EmbeddingStatus.FAILED})),
        checks_pending=Count("pk", filter=Q(memory__stats__check_pending=True)
                             & ~Q(**{status: EmbeddingStatus.FAILED})),
    )
    return ImportProgress(extraction_done=extraction_done, **counts)


def with_progress(chat_import: ChatImport) -> ChatImport:
    """The import with `progress` set: its job is done or failed, and what its memories await."""
    extraction_done = chat_import.status in (ChatImportStatus.DONE, ChatImportStatus.FAILED)
    chat_import.progress = import_progress(import_id=chat_import.pk,  # type: ignore[attr-defined]
                                           extraction_done=extraction_done)
    return chat_import
