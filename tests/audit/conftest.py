"""Audit fixtures: a helper to tamper with the log as its owner could, and personas by role."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.audit.services import audit_record
from governance.roles import Role
from tests.personas import member_client


@pytest.fixture
def tamper(db):
    """Run SQL on the audit table with its guard triggers off, as an owner could.

    ALTER TABLE is transactional, so the triggers come back when the test's transaction
    rolls back.
    """

    def run(sql: str, params: list | None = None) -> None:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute(sql, params or [])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

    return run


@pytest.fixture
def chain(db) -> list[AuditEvent]:
    """Five events in a fresh chain."""
    assert not AuditEvent.objects.exists()
    return [
        audit_record("edit", actor=SYSTEM, target_type="memory", target_id=f"mem_{n}",
                     before={"n": n}, after={"n": n + 1})
        for n in range(5)
    ]


@pytest.fixture
def persona(space):
    """persona(role) -> an API client for a new user holding `role` in `space` (None: no role)."""

    def make(role: str | None, name: str | None = None) -> APIClient:
        return member_client(space, role, name or f"as-{role or 'stranger'}")

    return make


@pytest.fixture
def curator(persona) -> APIClient:
    return persona(Role.CURATOR, "curator-of-webshop")
