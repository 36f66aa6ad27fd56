"""Audit records for what other parts of governance report by signal."""

from __future__ import annotations

from typing import Any

from core.actor import SYSTEM
from governance.audit.services import audit_record


def record_key_change(sender: Any, *, signal: Any, action: str, **details: Any) -> None:
    """Keys are made, rotated and destroyed by SAM itself (governance.crypto.events)."""
    audit_record(action, actor=SYSTEM, **details)
