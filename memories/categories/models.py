"""A space's categories and the memories placed in them (docs/recall.md, "Categories")."""

from __future__ import annotations

from django.db import models

from core.models import Space
from core.sealing import SealedJSONField, SealedTextField
from memories.models.entries import Memory


class ShownCategories(models.Manager):
    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(dismissed=False)


class Category(models.Model):
    """A space's topic (seed 002, Phase 5): seed 002's defaults in project spaces, and the
    space's own. Memories are placed in it by its keywords (memories.categories.services). Its
    summary and count are made for each reader from what that reader may see, so none is
    stored: a stored one would show restricted or deleted memories to whoever reads it."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="categories")
    name = models.SlugField(max_length=40)
    # Sealed: read in Python (lists, placement by keywords), never compared in SQL. Their
    # lengths (80, 300, 40 a keyword) are the API's limits.
    display_name = SealedTextField()
    description = SealedTextField(blank=True, default="")
    keywords = SealedJSONField(default=list, blank=True)
    builtin = models.BooleanField(default=False)
    # A built-in a curator removed: kept (hidden, empty) so the defaults do not bring it back.
    dismissed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    everything = models.Manager()
    objects = ShownCategories()

    class Meta:
        # Not the first declared: lists, the admin and the API see shown categories only.
        default_manager_name = "objects"
        ordering = ["space", "name"]
        verbose_name_plural = "categories"
        constraints = [models.UniqueConstraint(fields=["space", "name"], name="category_unique")]

    def __str__(self) -> str:
        # The slug, not the sealed display name: Django's admin log stores str() in plaintext.
        return f"{self.name} ({self.space_id})"

    def sealing_space_id(self) -> int:
        return self.space_id


class MemoryCategory(models.Model):
    """A memory placed in a category, and how well it fits (0-1)."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="category_links")
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="links")
    relevance = models.FloatField(default=1.0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "category"], name="memory_category_unique")]

    def __str__(self) -> str:
        return f"{self.memory_id} in {self.category_id}"
