"""Recall events (why each memory was recalled) and lexeme statistics for the lexical channel."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models

from core.models import Space
from governance.crypto.fields import SealedJSONField, SealedTextField
from memories.models import Memory


class RecallEvent(models.Model):
    """One recall: what was asked, what came back, and each item's signals and rationale.

    `items` is [{id, score, signals, rationale}] in ranked order, so a memory's timeline
    can say why it was recalled. Deleting a memory does not rewrite past events.
    """

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    spaces = ArrayField(models.CharField(max_length=80), default=list)
    # What was asked and why each memory came back is sealed: queries quote memories.
    query_text = SealedTextField()
    active_task = SealedTextField(blank=True, default="")
    profile = models.CharField(max_length=40)
    memory_ids = ArrayField(models.CharField(max_length=40), default=list)
    items = SealedJSONField(default=list)
    fail_safe = models.BooleanField(default=False)
    cached = models.BooleanField(default=False)
    duration_ms = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [GinIndex(fields=["memory_ids"], name="recall_memory_ids_gin")]

    def __str__(self) -> str:
        return f"recall {self.pk} ({len(self.memory_ids)} items)"

    def sealing_space_id(self) -> None:
        # A recall can span spaces, so its record is sealed with the system key.
        return None


class SpaceTextStats(models.Model):
    """How many memories a space had, and how long they were, when its lexeme statistics
    were last counted; `stale` once memories were written since (retrieval.freshness)."""

    space = models.OneToOneField(Space, primary_key=True, on_delete=models.CASCADE,
                                 related_name="+")
    documents = models.PositiveIntegerField(default=0)
    # Distinct lexemes per memory, on average: BM25's average document length.
    average_length = models.FloatField(default=0.0)
    stale = models.BooleanField(default=False)
    refreshed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.space_id}: {self.documents} documents"


class LexemeStat(models.Model):
    """How many memories of a space contain a lexeme, refreshed by a job.

    The lexical channel ORs together only the rarest query lexemes, so the number of
    rows Postgres must rank stays bounded however common the query's words are.
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    lexeme = models.CharField(max_length=200)
    ndoc = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "lexeme"], name="lexemestat_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.ndoc}"


class RecallGeneration(models.Model):
    """How many committed transactions have changed a space's memories.

    Part of every cached recall's key: a database trigger on the memory table raises it
    in the same transaction as the change (migration 0003), so once a restrict, delete,
    archive or edit commits, every web process computes a new key and none can serve an
    answer cached before it. A plain id rather than a foreign key: the trigger runs at
    commit, when a deleted space's memories may already have taken the space with them.
    """

    space_id = models.BigIntegerField(primary_key=True)
    generation = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"space {self.space_id}: generation {self.generation}"


class TrainingRun(models.Model):
    """One run of a memory's training examples (retrieval.training): how many passed, and
    per example its rank in recall and why it failed. No text: ids, ranks and reasons
    written by SAM. The history of a memory's pass rate is its runs."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="training_runs")
    ran_at = models.DateTimeField()
    examples = models.PositiveSmallIntegerField()
    passed = models.PositiveSmallIntegerField()
    pass_rate = models.FloatField()
    suggested = models.BooleanField(default=False, help_text="The examples were SAM's suggestions.")
    # Sealed: a failure's reason may quote the memory or its examples.
    results = SealedJSONField(default=list)

    class Meta:
        ordering = ["-ran_at", "-id"]
        indexes = [models.Index(fields=["memory", "-ran_at"], name="training_run_memory")]

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.passed}/{self.examples}"

    def sealing_space_id(self) -> int:
        return self.memory.space_id
