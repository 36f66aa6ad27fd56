"""The database itself refuses UPDATE, DELETE and (outside tests) TRUNCATE on the audit log."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from governance.audit.models import AuditEvent


def run(sql: str, params: list | None = None) -> None:
    # A savepoint, so the refused statement does not abort the test's transaction.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params or [])


def test_the_database_refuses_update(chain):
    with pytest.raises(DatabaseError, match="append-only: UPDATE refused"):
        run("UPDATE audit_auditevent SET actor_label = 'mallory' WHERE id = %s", [chain[1].pk])
    assert AuditEvent.objects.get(pk=chain[1].pk).actor_label == "system"


def test_the_database_refuses_delete(chain):
    with pytest.raises(DatabaseError, match="append-only: DELETE refused"):
        run("DELETE FROM audit_auditevent WHERE id = %s", [chain[-1].pk])
    assert AuditEvent.objects.count() == 5


def test_the_database_refuses_truncate_without_the_opt_out(chain):
    def truncate_without_opt_out() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL sam.audit_allow_truncate = 'off'")
            cursor.execute("TRUNCATE audit_auditevent")

    with pytest.raises(DatabaseError, match="TRUNCATE refused"):
        truncate_without_opt_out()
    assert AuditEvent.objects.count() == 5


def test_only_the_test_database_opts_out_of_the_truncate_guard(chain):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('sam.audit_allow_truncate', true)")
        assert cursor.fetchone()[0] == "on"
    with transaction.atomic():
        run("TRUNCATE audit_auditevent")
        assert AuditEvent.objects.count() == 0
        transaction.set_rollback(True)
    assert AuditEvent.objects.count() == 5
