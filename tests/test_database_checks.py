"""`migrate` on a database without pgvector, as a role that may not create the extension.

An external Postgres is often managed: the application's role is not a superuser, and only a
superuser may create the `vector` extension. SAM must say so before any migration runs, with
the statement to hand to the administrator, instead of failing half-way with "permission
denied". Runs against whichever server the suite uses (the embedded one, or the external
lane's, where the suite's own role is such a role).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from tests.database import database_url

ROOT = Path(settings.BASE_DIR)
pytestmark = pytest.mark.django_db(transaction=True)



@pytest.fixture
def bare_database():
    """A database without the extension, and a role (not a superuser) that owns it."""
    name = f"sam_noext_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, current_user FROM pg_roles WHERE rolname = current_user")
        superuser, current = cursor.fetchone()
        if superuser:
            role, password = f"{name}_role", uuid.uuid4().hex
            cursor.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        else:  # the external lane: the suite's own role may not create extensions either
            role, password = current, connection.settings_dict["PASSWORD"]
        # template0: template1 may carry the extension already.
        cursor.execute(f"CREATE DATABASE {name} OWNER {role} TEMPLATE template0")
    yield database_url(name, user=role, password=password), name, role
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if superuser:
            cursor.execute(f"DROP ROLE IF EXISTS {role}")


def test_migrate_names_the_missing_extension_and_the_statement_to_run(bare_database):
    url, name, role = bare_database
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "samsite.settings.base"}
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)

    assert done.returncode != 0
    assert "sam.E013" in done.stderr
    assert f'role "{role}" may not create it' in done.stderr
    assert f'in database "{name}": CREATE EXTENSION vector;' in done.stderr
    assert "Traceback" not in done.stderr
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"], port=db["PORT"] or None, dbname=name, user=role,
                         password=db["PASSWORD"] if role == db["USER"] else None) as bare:
        # Nothing half-migrated: not even Django's migrations table was created.
        assert bare.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'django_migrations'"
                            ).fetchone() == (0,)
