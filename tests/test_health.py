"""/healthz and /readyz: JSON, no login, nothing an outsider could use; readiness names the
check that fails (the database down is in tests/test_database_down.py, served by gunicorn)."""

import pytest
from django.conf import settings
from django.db import connection

CHECKS = {"database", "migrations", "broker", "embedding"}


def test_alive_and_ready_without_logging_in(anon, db):
    alive = anon.get("/healthz")
    ready = anon.get("/readyz")

    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": dict.fromkeys(CHECKS, "ok")}
    assert ready["Cache-Control"].startswith("max-age=0")
    assert anon.post("/readyz").status_code == 405


def test_a_migration_not_applied_makes_the_process_not_ready(anon, db):
    # As if this process's code had a migration the database has not run yet.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE id = (SELECT max(id) FROM django_migrations)")

    ready = anon.get("/readyz")

    assert ready.status_code == 503
    assert ready.json() == {"status": "not_ready",
                            "checks": {**dict.fromkeys(CHECKS, "ok"), "migrations": "failing"}}


@pytest.mark.redis
@pytest.mark.skipif(settings.Q_CLUSTER.get("redis") is None, reason="needs the Redis broker (the redis lane)")
def test_a_redis_broker_that_does_not_answer_makes_the_process_not_ready(anon, db, monkeypatch):
    from django_q.conf import Conf

    assert anon.get("/readyz").json()["checks"]["broker"] == "ok"  # the lane's redis-server answers
    # Nothing listens on port 1: as if Redis were down.
    monkeypatch.setattr(Conf, "REDIS", "redis://127.0.0.1:1/0")

    ready = anon.get("/readyz")

    assert ready.status_code == 503
    assert ready.json()["checks"] == {**dict.fromkeys(CHECKS, "ok"), "broker": "failing"}
