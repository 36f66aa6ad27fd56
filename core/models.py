"""The tenancy root: the Space every memory, PRD, recall event and grant belongs to.

It sits at the bottom of the project (docs/architecture.md): every app may import it, and
it imports nothing of theirs. Its table keeps its first name, `memories_space`.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from django.db.models import Q

from core.choices import SPACE_PERMISSIONS, Mode, Retention
from core.sealing import SealedTextField


class SpaceKind(models.TextChoices):
    GLOBAL = "global"
    PROJECT = "project"
    AGENT = "agent"
    USER = "user"


class SpaceManager(models.Manager["Space"]):
    """Leaves the sealed description out of every query unless asked for (`.defer(None)`).

    Almost nothing that loads a space needs it, and a space outlives its data keys when
    it is forgotten: code that runs then (destroying the old keys, auditing the new one)
    must be able to load the space without opening what the old key sealed. Also the
    base manager, so `memory.space` and `key.space` leave it out too.
    """

    def get_queryset(self) -> models.QuerySet[Space]:
        return super().get_queryset().defer(*Space.SEALED_FIELDS)


class DuplicatePolicy(models.TextChoices):
    # The same text again reinforces the memory stored; no second row.
    REINFORCE = "reinforce"
    KEEP = "keep", "Keep both"


class NearDuplicatePolicy(models.TextChoices):
    REVIEW = "review", "Ask a curator"
    MERGE = "merge", "Merge into the older"
    LINK = "link", "Link as similar"
    KEEP = "keep", "Keep both, unlinked"


class SupersessionPolicy(models.TextChoices):
    # Certain contradictions supersede the older memory; unsure ones go to review.
    AUTO = "auto", "Supersede when certain"
    REVIEW = "review", "Always ask a curator"
    OFF = "off", "Do nothing"


class Space(models.Model):
    """The scope every memory belongs to: global, a project, an agent or a user."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=SpaceKind.choices, default=SpaceKind.PROJECT)
    # Free text, redacted and sealed under the space's own key (see save()).
    description = SealedTextField(blank=True, null=True, default="")
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.ASSIST)
    retention_days = models.PositiveSmallIntegerField(
        choices=Retention.choices, null=True, blank=True, help_text="Empty keeps memories forever."
    )
    # Whether the nightly job may delete memories whose confidence fell below the prune
    # floor (docs/lifecycle.md). Off by default: below their floor they are suggested for
    # archiving, never deleted.
    prune_decayed = models.BooleanField(default=False)
    # A chat user's notes (user spaces only; docs/lifecycle.md, "A chat user's notes"). Empty
    # takes the install's setting (SAM_USER_NOTE_CAP, SAM_USER_HIGH_IDLE_DAYS); 0 turns the
    # rule off for this space.
    note_cap = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="User spaces: active memories kept before the oldest low and normal ones are "
                  "archived. Empty: SAM_USER_NOTE_CAP; 0: no cap.")
    high_idle_days = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="User spaces: days a high-priority memory may go unused (counted back from the "
                  "space's last activity) before it is lowered to normal. Empty: "
                  "SAM_USER_HIGH_IDLE_DAYS; 0: never.")
    # What a write does with a memory already stored (docs/lifecycle.md, "On write").
    duplicate_policy = models.CharField(max_length=12, choices=DuplicatePolicy.choices,
                                        default=DuplicatePolicy.REINFORCE)
    near_duplicate_policy = models.CharField(max_length=12, choices=NearDuplicatePolicy.choices,
                                             default=NearDuplicatePolicy.REVIEW)
    supersession_policy = models.CharField(max_length=12, choices=SupersessionPolicy.choices,
                                           default=SupersessionPolicy.AUTO)
    # Chat histories this space accepts imports from (docs/capture.md): none by default; the
    # owner opts in per source (claude_code, chatgpt, cursor, jsonl).
    capture_sources = ArrayField(models.CharField(max_length=20), default=list, blank=True)
    # Usernames and account ids that redaction keeps in this space (case-insensitive).
    redaction_allowlist = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SpaceManager()

    class Meta:
        db_table = "memories_space"
        base_manager_name = "objects"
        ordering = ["slug"]
        # Object permissions granted per space through django-guardian (governance.roles).
        permissions = SPACE_PERMISSIONS
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=SpaceKind.values), name="space_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Insert a new space with its sealed fields empty, then seal them under its new key.

        Both statements run in one transaction, so no reader sees the empty row.
        """
        if not self._state.adding:
            super().save(*args, **kwargs)
            return
        values = {name: getattr(self, name) for name in self.SEALED_FIELDS}
        with transaction.atomic(using=kwargs.get("using")):
            for name in self.SEALED_FIELDS:
                setattr(self, name, None)
            super().save(*args, **kwargs)
            for name, value in values.items():
                setattr(self, name, value)
            super().save(update_fields=list(self.SEALED_FIELDS), using=kwargs.get("using"))

    # Sealed under the space's own data key, which can exist only once the row does.
    SEALED_FIELDS = ("description",)

    def sealing_space_id(self) -> int:
        if self.pk is None:
            raise ImproperlyConfigured("A space's sealed fields are written by Space.save().")
        return self.pk
