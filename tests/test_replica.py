"""Reads from a streaming replica: routing, read-your-writes, lag and a replica that goes down.

Runs in the replica lane (`python -m tests.lanes replica`), which starts a primary and a
replica cloned from it with pg_basebackup and sets SAM_REPLICA_URL; skipped elsewhere. The
tests commit for real: the replica only ever sees committed, streamed data.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test.utils import CaptureQueriesContext

from core import replica
from governance.access import SYSTEM
from governance.services import membership_revoke
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.lanes.servers import PostgresCluster
from tests.personas import client_for

pytestmark = [
    pytest.mark.replica,
    pytest.mark.django_db(transaction=True, databases="__all__"),
    pytest.mark.skipif("replica" not in settings.DATABASES,
                       reason="needs SAM_REPLICA_URL (the replica lane)"),
]


@pytest.fixture(autouse=True)
def fresh_health(monkeypatch):
    """Each test starts with a replica this process has not judged yet."""
    monkeypatch.setattr(replica, "health", replica._Health())


@pytest.fixture
def team():
    owner, reader = UserFactory(username="owner"), UserFactory(username="reader")
    space = SpaceFactory(slug="replicated", members={owner: "owner", reader: "viewer"})
    return {"space": space, "writer": client_for(owner), "reader": client_for(reader), "reader_user": reader}


def standby() -> PostgresCluster:
    return PostgresCluster(root=Path(os.environ["SAM_LANE_REPLICA_ROOT"]),
                           port=int(os.environ["SAM_LANE_REPLICA_PORT"]))


def replayed(memory_id: str, timeout: float = 10) -> None:
    """Wait until the replica has the memory (streaming takes milliseconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connections["replica"].cursor() as cursor:
            cursor.execute("SELECT 1 FROM memories_memory WHERE id = %s", [memory_id])
            if cursor.fetchone():
                return
        time.sleep(0.05)
    raise AssertionError("the replica did not replay the write")


def caught_up(timeout: float = 10) -> None:
    """Wait until the replica has replayed everything, so a pause holds no replayed lock
    (a paused replica keeps the table locks of the transactions it is in the middle of)."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        target = replica.lsn_value(cursor.fetchone()[0])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connections["replica"].cursor() as cursor:
            cursor.execute("SELECT pg_last_wal_replay_lsn()::text")
            if replica.lsn_value(cursor.fetchone()[0]) >= target:
                return
        time.sleep(0.05)
    raise AssertionError("the replica did not catch up")


def memory_queries(captured: CaptureQueriesContext) -> list[str]:
    """The statements that read or wrote the memories table itself."""
    return [q["sql"] for q in captured.captured_queries if re.search(r"\bmemories_memory\b", q["sql"])]


def create(client, space, title: str) -> str:
    response = client.post("/api/v1/memories/", {"space": space.slug, "title": title,
                                                  "content": f"{title}: noted for the replica tests."},
                           format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def test_lists_details_and_recall_read_from_the_replica(team):
    memory = make_memory(team["space"], title="Replicated deploy note", content="Deploys go out on Tuesdays.")
    replayed(memory.id)

    with CaptureQueriesContext(connections["replica"]) as on_replica, \
            CaptureQueriesContext(connections["default"]) as on_primary:
        listed = team["reader"].get("/api/v1/memories/", {"space": "replicated"})
        detail = team["reader"].get(f"/api/v1/memories/{memory.id}/")
        recalled = team["reader"].post("/api/v1/recall/", {"query": "when do deploys go out",
                                                           "spaces": ["replicated"]}, format="json")

    assert listed.status_code == detail.status_code == recalled.status_code == 200
    assert [m["id"] for m in listed.json()["results"]] == [memory.id]
    assert memory.id in [m["id"] for m in recalled.json()["data"]["ranked_memory_list"]]
    assert memory_queries(on_replica)
    assert not [sql for sql in memory_queries(on_primary) if sql.lstrip("(").startswith("SELECT")]
    # The recall's audit record is a write, and writes only ever go to the primary.
    assert any(q["sql"].startswith("INSERT") for q in on_primary.captured_queries)


def test_a_write_is_always_read_back_by_the_client_that_made_it(team):
    for n in range(30):
        memory_id = create(team["writer"], team["space"], f"Write then read {n}")
        assert team["writer"].get(f"/api/v1/memories/{memory_id}/").status_code == 200
        listed = team["writer"].get("/api/v1/memories/", {"space": "replicated", "page_size": 100})
        assert memory_id in [m["id"] for m in listed.json()["results"]]


def test_while_the_replica_lags_the_writer_reads_from_the_primary_and_others_once_past_the_bound(
        team, settings):
    settings.SAM_REPLICA_MAX_LAG_SECONDS = 2
    caught_up()
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_wal_replay_pause()")
    try:
        memory_id = create(team["writer"], team["space"], "Written while the replica is paused")

        with CaptureQueriesContext(connections["replica"]) as on_replica:
            mine = team["writer"].get(f"/api/v1/memories/{memory_id}/")
        assert mine.status_code == 200
        assert not memory_queries(on_replica)

        # Another client may read the replica while it is within the lag bound…
        with CaptureQueriesContext(connections["replica"]) as on_replica:
            team["reader"].get("/api/v1/memories/", {"space": "replicated"})
        assert memory_queries(on_replica)
        # …and reads the primary, with the write in it, once the replica is further behind.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            listed = team["reader"].get("/api/v1/memories/", {"space": "replicated"})
            if memory_id in [m["id"] for m in listed.json()["results"]]:
                break
            time.sleep(0.5)
        else:
            raise AssertionError("reads stayed on a replica lagging past the bound")
        assert replica.health.lag > settings.SAM_REPLICA_MAX_LAG_SECONDS
    finally:
        with connections["replica"].cursor() as cursor:
            cursor.execute("SELECT pg_wal_replay_resume()")


def test_a_role_revoked_while_the_replica_lags_ends_at_the_next_request(team):
    """Given a reader whose rights this process keeps and a paused replica, when their role is
    revoked, then their next request finds nothing: rights, and the generation they are kept
    under, are read on the primary, so the replica's old rows are never filed as current."""
    memory = make_memory(team["space"], title="Replicated rights note", content="Kept for viewers.")
    replayed(memory.id)
    assert team["reader"].get(f"/api/v1/memories/{memory.id}/").status_code == 200
    caught_up()
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_wal_replay_pause()")
    try:
        membership_revoke(actor=SYSTEM, space=team["space"], user=team["reader_user"])

        assert team["reader"].get(f"/api/v1/memories/{memory.id}/").status_code == 404
        listed = team["reader"].get("/api/v1/memories/", {"space": "replicated"})
        assert memory.id not in [m["id"] for m in listed.json().get("results", [])]
    finally:
        with connections["replica"].cursor() as cursor:
            cursor.execute("SELECT pg_wal_replay_resume()")


def test_recall_and_lists_keep_working_when_the_replica_is_down_and_return_to_it_after(team):
    memory = make_memory(team["space"], title="Failover drill",
                         content="The replica may go away at any time.")
    replayed(memory.id)
    server = standby()
    server.stop()
    try:
        recalled = team["reader"].post("/api/v1/recall/", {"query": "failover drill",
                                                           "spaces": ["replicated"]}, format="json")
        listed = team["reader"].get("/api/v1/memories/", {"space": "replicated"})
        assert recalled.status_code == listed.status_code == 200
        assert memory.id in [m["id"] for m in recalled.json()["data"]["ranked_memory_list"]]
        assert [m["id"] for m in listed.json()["results"]] == [memory.id]
    finally:
        server.start()

    deadline = time.monotonic() + replica.DOWN_SECONDS + 15
    while time.monotonic() < deadline:
        with CaptureQueriesContext(connections["replica"]) as on_replica:
            assert team["reader"].get("/api/v1/memories/", {"space": "replicated"}).status_code == 200
        if memory_queries(on_replica):
            break
        time.sleep(0.5)
    else:
        raise AssertionError("reads never went back to the replica")


def test_a_replica_lost_in_the_middle_of_a_request_is_retried_on_the_primary(team):
    memory = make_memory(team["space"], title="Mid-request failover", content="Lost between check and query.")
    replayed(memory.id)
    # The replica was fine a moment ago (so no check runs now), then it goes away.
    team["reader"].get("/api/v1/memories/", {"space": "replicated"})
    server = standby()
    server.kill()
    try:
        replica.health.checked_at = time.monotonic()
        recalled = team["reader"].post("/api/v1/recall/", {"query": "mid-request failover",
                                                           "spaces": ["replicated"]}, format="json")
        assert recalled.status_code == 200
        assert memory.id in [m["id"] for m in recalled.json()["data"]["ranked_memory_list"]]
        assert time.monotonic() < replica.health.down_until
    finally:
        server.start()
