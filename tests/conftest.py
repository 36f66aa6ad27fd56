"""Shared fixtures: personas with real API tokens, spaces, and on-commit execution."""

from __future__ import annotations

import os
import shutil

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from tests.factories import SpaceFactory, UserFactory
from tests.personas import client_for
from tests.queue import purge_queue

# pytest-django's fixtures through which a test reaches the test database.
DATABASE_FIXTURES = frozenset({
    "db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server",
})


def reaches_the_test_database(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return bool(DATABASE_FIXTURES & fixtures) or item.get_closest_marker("django_db") is not None


BROWSER_MISSING = ("Chromium and chromedriver are not installed (Debian/Ubuntu: apt-get install chromium "
                   "chromium-driver; .ci/run installs them)")


def browser_available() -> bool:
    """Whether the system's Chromium and its driver are here (the browser tests need both)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    return bool(chromium and shutil.which("chromedriver"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Every test marked `browser`, whichever module, is skipped for one stated reason where
    # Chromium is missing: `-ra` lists it in the run's summary.
    if not browser_available():
        skip = pytest.mark.skip(reason=BROWSER_MISSING)
        for item in items:
            if item.get_closest_marker("browser") is not None:
                item.add_marker(skip)
    # A lane that runs the suite against another Postgres (tests/lanes, external) gains
    # nothing from a test that never reaches the test database: its result cannot differ
    # there. Tests that start a Postgres of their own bring it along whatever the lane.
    if not os.environ.get("SAM_LANE_DATABASE_TESTS_ONLY"):
        return
    kept = [item for item in items if reaches_the_test_database(item)]
    dropped = [item for item in items if not reaches_the_test_database(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_sessionfinish(session, exitstatus) -> None:
    # Stop the embedded Postgres if this test run started it; leave a running one alone.
    from core import embedded_db

    data_dir = settings.SAM_EMBEDDED_DB_DIR
    if data_dir is not None and embedded_db.started_by_this_process(data_dir):
        from django.db import connections

        connections.close_all()
        embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Let the test database TRUNCATE the append-only audit table.

    Transactional tests are cleaned up with TRUNCATE, which the audit table refuses
    unless the database opts out (governance/audit/migrations/0002; docs/audit.md).
    Only the test database ever sets this. Connections opened from now on pick it up.
    """
    from django.db import connection

    with django_db_blocker.unblock():
        with connection.cursor() as cursor:
            name = connection.ops.quote_name(connection.settings_dict["NAME"])
            cursor.execute(f"ALTER DATABASE {name} SET sam.audit_allow_truncate = 'on'")
        connection.close()


@pytest.fixture
def user(db):
    """The suite's main user: it owns the `space` fixture (tests.personas makes the others)."""
    return UserFactory(username="owner")


@pytest.fixture
def api(user) -> APIClient:
    """An HTTP client of the `user` fixture, authenticated the way agents are: a bearer token."""
    return client_for(user)


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def space(user):
    """A project space the `user` fixture owns."""
    return SpaceFactory(slug="webshop", name="Webshop", members={user: "owner"})


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run on-commit callbacks (the embedding enqueue) when the block ends, as a real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def enqueue_to_the_broker(monkeypatch, transactional_db):
    """The suite runs tasks inline; cluster tests send them through the broker to a real cluster.

    The queue starts empty: a Redis queue outlives the test database's flush between tests.
    """
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", False)
    purge_queue()
    yield
    purge_queue()
