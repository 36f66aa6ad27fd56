"""Reads of recall's own records that depend on who asks (through governance.access)."""

from __future__ import annotations

from core.actor import Actor
from governance import access
from memories.models import Memory
from retrieval import training


def training_panel_get(*, actor: Actor, memory_id: str) -> training.TrainingPanel:
    """A memory's training examples and newest runs. 404 for a memory the actor cannot read."""
    memory = access.access_object(Memory.objects.select_related("space"), actor, pk=memory_id,
                                  action="read", label="memory")
    return training.panel(memory)
