"""The audit log: one append-only, hash-chained row per change (and per recall, export...)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q

from governance.audit.chain import HASHED_FIELDS, event_digest
from governance.crypto import cipher

# The associated data of sealed payloads: the column they belong in.
PAYLOAD_CONTEXT = "audit_auditevent.payload"


class AuditAction(models.TextChoices):
    CREATE = "create"
    EDIT = "edit"
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive", "Unarchive (restore)"
    DELETE = "delete"
    VERSION_RESTORE = "version_restore"
    RECALL = "recall"
    EXPORT = "export"
    IMPORT = "import"
    GRANT = "grant"
    REVOKE = "revoke"
    RESTRICT = "restrict"
    TOKEN_ISSUE = "token_issue"
    TOKEN_REVOKE = "token_revoke"
    KEY_CREATE = "key_create"
    KEY_ROTATE = "key_rotate"
    KEY_DESTROY = "key_destroy"
    MODE_CHANGE = "mode_change"
    RETENTION_PURGE = "retention_purge"
    FORGET = "forget"
    MERGE = "merge"


class AppendOnlyError(Exception):
    """Raised on an attempt to change or remove an audit event through the ORM.

    The database refuses the same (triggers); this only makes the mistake obvious sooner.
    """


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("Audit events cannot be changed.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Audit events cannot be deleted.")

    def for_target(self, target_type: str, target_id: str) -> AuditEventQuerySet:
        return self.filter(target_type=target_type, target_id=target_id)


class AuditEvent(models.Model):
    """Who did what to which object, when, in which request, with the change itself.

    Rows outlive what they describe (users, spaces and memories get deleted) and the
    table refuses UPDATE, so references are plain values, not foreign keys: ids plus the
    label they had at the time. The payload is {"before", "after", "changes", "note"} as
    they apply, sealed. `hash` chains the row to the previous one over the stored (sealed)
    values, so the chain verifies without keys (governance.audit.chain).
    Write rows only through governance.audit.services.audit_record.
    """

    at = models.DateTimeField()
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor_label = models.CharField(max_length=150)
    space_id = models.BigIntegerField(null=True, blank=True)
    space_slug = models.CharField(max_length=80, blank=True, default="")
    target_type = models.CharField(max_length=40, blank=True, default="")
    target_id = models.CharField(max_length=200, blank=True, default="")
    request_id = models.CharField(max_length=64, blank=True, default="")
    # Sealed JSON (governance.crypto) under the space's data key, the system key without a
    # space. Read it with `payload_data`; loading a row never decrypts, so rows whose key
    # was destroyed still list, verify and show their labels.
    payload = models.BinaryField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["target_type", "target_id", "at"], name="audit_target_at"),
            models.Index(fields=["space_id", "at"], name="audit_space_at"),
            models.Index(fields=["at"], name="audit_at"),
            models.Index(fields=["request_id"], name="audit_request_id"),
            # A plain Index, not db_index: that would add a second, LIKE-only index.
            models.Index(fields=["hash"], name="audit_hash"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(hash__regex=r"^[0-9a-f]{64}$"), name="audit_hash_hex"),
            models.CheckConstraint(condition=Q(prev_hash__regex=r"^[0-9a-f]{64}$"),
                                   name="audit_prev_hash_hex"),
        ]

    def __str__(self) -> str:
        target = f" {self.target_type}:{self.target_id}" if self.target_type else ""
        return f"#{self.pk} {self.action}{target} by {self.actor_label}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("Audit events cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Audit events cannot be deleted.")

    @property
    def payload_data(self) -> dict[str, Any]:
        """The opened payload. Raises governance.crypto KeyDestroyed once its key is shredded."""
        return cipher.open_json(self.payload, context=PAYLOAD_CONTEXT)

    def stored_values(self) -> dict[str, Any]:
        """The hashed columns as they are (or will be) stored."""
        return {name: getattr(self, name) for name in HASHED_FIELDS}

    def computed_hash(self) -> str:
        return event_digest(self.prev_hash, self.stored_values())
