"""What a write service hands back: the object as written, and what the caller must tell.

One shape for every write, so no service passes results back as attributes set on model
instances, and an API view builds its answer from this alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass
class WriteResult(Generic[T]):
    instance: T
    # The diff from the previous version ([{path, before, after, reason}]); empty when
    # nothing changed.
    changelog: list[dict[str, Any]] = field(default_factory=list)
    # Fields SAM filled in because the caller left them out.
    suggested: list[str] = field(default_factory=list)
    # What redaction removed: [{path, kind, pattern, start, end}], never the removed text.
    redaction_report: list[dict[str, Any]] = field(default_factory=list)
    # False when the memory mode answered without keeping anything (incognito).
    persisted: bool = True
    # True when a create found the same text stored and reinforced that memory instead.
    reinforced: bool = False
