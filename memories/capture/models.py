"""Chat-history imports: their watermarks per conversation and the uploaded imports (docs/capture.md)."""

from __future__ import annotations

from pathlib import PurePosixPath

from django.conf import settings
from django.db import models
from ulid import ULID

from core.models import Space
from core.sealing import SealedJSONField, SealedTextField
from memories.capture import report_paths, uploads


class ImportedConversation(models.Model):
    """The watermark of one imported conversation (docs/capture.md): what was read of it, so
    a re-import skips it when unchanged and reads only its new exchanges when it grew.

    `key` is a keyed hash of the source's conversation id (the id may name a file or a
    person); `fingerprint` hashes what was said.
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=20)
    key = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    exchanges = models.PositiveIntegerField(default=0)
    memories = models.PositiveIntegerField(default=0)
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["space", "source", "key"],
                                               name="imported_conversation_once")]

    def __str__(self) -> str:
        return f"{self.source} {self.key[:12]} in {self.space_id}"


def new_chat_import_id() -> str:
    return f"imp_{ULID()}"


class ChatImportStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ChatImport(models.Model):
    """A chat history uploaded through the API and imported by a job (docs/capture.md).

    The uploaded file is deleted once the job is done: the raw history is personal data,
    and only what the extractors kept (redacted, sealed memories) stays. The report holds
    counts, rules, ids and reasons, not what was said.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_chat_import_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=ChatImportStatus.choices,
                              default=ChatImportStatus.QUEUED)
    # Sealed, like what the history said: a file name, a reader's reasons and an error can
    # name people, projects and folders.
    file_name = SealedTextField()
    size_bytes = models.BigIntegerField(default=0)
    report = SealedJSONField(default=dict, blank=True)
    error = SealedTextField(blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # When its job claimed it (memories.capture.runs): the janitor fails a run older than any
    # job may last.
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.source} import {self.id} ({self.status})"

    def save(self, *args, **kwargs) -> None:
        # Whoever fills them (the job, a conversation's capture, the admin), the name keeps no
        # folder and the report and error no server path (memories.capture.report_paths).
        self.file_name = PurePosixPath(str(self.file_name).replace("\\", "/")).name[:255]
        upload = uploads.folder(self.pk)
        self.report = report_paths.strip(self.report, upload=upload)
        self.error = report_paths.strip_text(self.error or "", upload=upload)[:500]
        super().save(*args, **kwargs)

    def sealing_space_id(self) -> int:
        return self.space_id


class ImportedMemory(models.Model):
    """A memory an import created, by the import's id (docs/capture.md, "When an import is final").

    Its report counts what is still pending for these memories (their embedding, their write
    checks), which a memory's sealed metadata cannot answer in SQL. `import_id` is a
    ChatImport's id for an upload, or the id a `sam_chat_import` run gave itself (no row).
    """

    memory = models.OneToOneField("memories.Memory", primary_key=True, on_delete=models.CASCADE,
                                  related_name="+")
    import_id = models.CharField(max_length=40, db_index=True)

    def __str__(self) -> str:
        return f"{self.memory_id} from {self.import_id}"
