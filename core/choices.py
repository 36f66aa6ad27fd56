"""The choices a space is made of: its memory mode, its retention and its permissions.

They sit with the Space model because its columns and Meta name them; what the modes and
permissions mean (policies, roles, checks) is governance's business.
"""

from __future__ import annotations

from django.db import models


class Mode(models.TextChoices):
    ASSIST = "assist", "assist: capture and recall"
    CAPTURE_ONLY = "capture_only", "capture only: store, never recall"
    PAUSED = "paused", "paused: the store is read-only until resumed"
    INCOGNITO = "incognito", "incognito: answer, but write nothing durable"
    OFF = "off", "off: no capture, no recall"


class Retention(models.IntegerChoices):
    """How long a space keeps memories after their last change; None is forever."""

    DAYS_7 = 7, "7 days"
    DAYS_30 = 30, "30 days"
    DAYS_90 = 90, "90 days"


# Object permissions on Space (declared in Space.Meta.permissions).
PERM_READ = "space_read"          # see memories, recall, context packs, versions
PERM_WRITE = "space_write"        # add memories, edit your own
PERM_EDIT_ANY = "space_edit_any"  # edit anyone's memories
PERM_CURATE = "space_curate"      # archive, restore, delete, merge, restrict, resolve conflicts
PERM_AUDIT = "space_audit"        # read the audit timeline
PERM_MANAGE = "space_manage"      # members, roles, restricted tags, mode, retention, forget

SPACE_PERMISSIONS = (
    (PERM_READ, "Read memories and recall"),
    (PERM_WRITE, "Add memories and edit own"),
    (PERM_EDIT_ANY, "Edit any memory"),
    (PERM_CURATE, "Archive, restore, delete, merge and restrict memories"),
    (PERM_AUDIT, "Read the audit timeline"),
    (PERM_MANAGE, "Manage members, roles, restricted tags, mode and retention"),
)
