"""The review queue: what about a memory needs a curator (docs/lifecycle.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.models import Space
from memories.models.entries import Memory


class ReviewKind(models.TextChoices):
    ARCHIVE_SUGGESTION = "archive_suggestion"
    CONTESTED = "contested"
    # A newer memory seems to contradict an older one, and SAM is not sure which holds.
    CONTRADICTION = "contradiction"
    NEAR_DUPLICATE = "near_duplicate"
    TRAINING_FAILURE = "training_failure"


class ReviewStatus(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"


class ReviewItem(models.Model):
    """Something about a memory that needs a person: the review queue (docs/lifecycle.md).

    `reason` and `evidence` are written by SAM from numbers and ids only (never memory text),
    so they stay in plaintext. One open item per kind and memory (and other memory, for pairs).
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="review_items")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="review_items")
    # The other memory of a pair (near duplicates); none for the kinds about one memory.
    other = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=24, choices=ReviewKind.choices)
    status = models.CharField(max_length=12, choices=ReviewStatus.choices, default=ReviewStatus.OPEN)
    reason = models.CharField(max_length=300)
    evidence = models.JSONField(default=dict, blank=True)
    resolution = models.CharField(max_length=24, blank=True, default="")
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["space", "status", "kind", "-created_at"], name="review_space_open")]
        constraints = [
            models.UniqueConstraint(fields=["kind", "memory", "other"], condition=Q(status="open"),
                                    nulls_distinct=False, name="review_one_open_per_kind"),
            models.CheckConstraint(condition=Q(kind__in=ReviewKind.values), name="review_kind_valid"),
            models.CheckConstraint(condition=Q(status__in=ReviewStatus.values), name="review_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.memory_id} ({self.status})"
