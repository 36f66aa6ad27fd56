"""Cached recall answers across web processes, with the cache the run uses: per process by
default, shared on Redis in the redis lane (`python -m tests.lanes redis`, SAM_CACHE_URL).

Two gunicorn servers on loopback ports serve the test database, as two web processes of
one install would. Each caches a recall answer; a change committed through the other
process (a restrict, a delete) or by a service (a revoked role) must keep the memory out
of the very next answer of both: no process may serve what the caller may no longer see.
These tests commit for real (transactional_db), so the servers see the rows.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from governance.access import SYSTEM
from governance.services import api_token_issue, membership_revoke
from memories.models import Memory
from retrieval.models import RecallGeneration
from tests.database import database_url
from tests.factories import SpaceFactory, UserFactory, make_memory

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(settings.BASE_DIR)
TITLE = "Quartzpelican rollout checklist"



def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """One gunicorn process (one worker) with the default settings and the run's cache."""

    def __init__(self) -> None:
        self.port = _free_port()
        environment = {**os.environ, "DATABASE_URL": database_url(),
                       "DJANGO_SETTINGS_MODULE": "samsite.settings.base"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "samsite.wsgi:application", "--workers", "1",
             "--bind", f"127.0.0.1:{self.port}", "--timeout", "60"],
            cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def call(self, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else {}
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def wait_ready(self, token: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited: {self.process.stderr.read().decode()[-2000:]}")
            try:
                self.call("GET", "/api/v1/me/mode/", token)
                return
            except (ConnectionError, urllib.error.URLError):
                time.sleep(0.2)
        raise AssertionError("gunicorn did not start")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)


@pytest.fixture
def people():
    owner, viewer = UserFactory(username="owner"), UserFactory(username="viewer")
    space = SpaceFactory(slug="rollouts", members={owner: "owner", viewer: "viewer"})
    memories = {title: make_memory(space, title=title, content=f"{title}: run the smoke tests first.")
                for title in (TITLE, "Ordinary rollout note")}
    return {"space": space, "owner": owner, "viewer": viewer, "memories": memories,
            "owner_token": api_token_issue(user=owner, name="owner")[1],
            "viewer_token": api_token_issue(user=viewer, name="viewer")[1]}


@pytest.fixture
def servers(people) -> Iterator[tuple[Server, Server]]:
    pair = (Server(), Server())
    try:
        for server in pair:
            server.wait_ready(people["viewer_token"])
        yield pair
    finally:
        for server in pair:
            server.stop()


def recalled(server: Server, token: str) -> tuple[bool, list[str]]:
    """(cached, titles) of a recent-memories recall through `server`."""
    status, body = server.call("POST", "/api/v1/recall/", token,
                               {"query_type": "recent", "k": 10, "track": False})
    assert status == 200, body
    data = body["data"]
    return data["cached"], sorted(item["title"] for item in data["ranked_memory_list"])


def cache_both(servers: tuple[Server, Server], token: str) -> None:
    """Given: each process has answered the recall and holds the answer in its cache."""
    for server in servers:
        recalled(server, token)
        cached, titles = recalled(server, token)
        assert cached is True
        assert TITLE in titles


def test_a_restrict_through_one_process_hides_the_memory_in_the_cache_of_the_other(people, servers):
    first, second = servers
    cache_both(servers, people["viewer_token"])
    memory_id = people["memories"][TITLE].id

    status, _ = first.call("POST", f"/api/v1/memories/{memory_id}/restrict/", people["owner_token"],
                           {"restricted_to": "curator", "reason": "not for viewers"})
    assert status == 200

    for server in (second, first):
        _, titles = recalled(server, people["viewer_token"])
        assert titles == ["Ordinary rollout note"]


def test_a_delete_through_one_process_removes_the_memory_from_the_cache_of_the_other(people, servers):
    first, second = servers
    cache_both(servers, people["viewer_token"])
    memory_id = people["memories"][TITLE].id

    status, _ = second.call("DELETE", f"/api/v1/memories/{memory_id}/", people["owner_token"])
    assert status == 204

    for server in (first, second):
        _, titles = recalled(server, people["viewer_token"])
        assert titles == ["Ordinary rollout note"]


def test_a_revoked_role_ends_cached_answers_in_every_process(people, servers):
    cache_both(servers, people["viewer_token"])

    membership_revoke(actor=SYSTEM, space=people["space"], user=people["viewer"])

    for server in servers:
        _, titles = recalled(server, people["viewer_token"])
        assert titles == []


def test_the_generation_moves_once_per_committed_transaction_whatever_it_wrote(people):
    """The trigger raises a space's generation in the writing transaction, once per transaction,
    whichever code path wrote (here a plain queryset update, no service involved)."""
    space, ids = people["space"], [m.id for m in people["memories"].values()]
    before = RecallGeneration.objects.get(space_id=space.pk).generation

    Memory.objects.filter(pk=ids[0]).update(importance=0.9)
    after_one = RecallGeneration.objects.get(space_id=space.pk).generation
    with transaction.atomic():
        for memory_id in ids:
            Memory.objects.filter(pk=memory_id).update(importance=0.2)
    after_batch = RecallGeneration.objects.get(space_id=space.pk).generation

    assert after_one == before + 1
    assert after_batch == after_one + 1


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("SAM_CACHE_URL"), reason="needs the shared cache (the redis lane)")
def test_with_a_shared_cache_one_process_answers_from_what_the_other_computed(people, servers):
    first, second = servers
    token = people["viewer_token"]

    assert recalled(first, token)[0] is False
    cached, titles = recalled(second, token)  # never asked this process before

    assert cached is True
    assert TITLE in titles
    # …and a change through one process still reaches the next answer of the other.
    memory_id = people["memories"][TITLE].id
    assert first.call("DELETE", f"/api/v1/memories/{memory_id}/", people["owner_token"])[0] == 204
    cached, titles = recalled(second, token)
    assert cached is False
    assert titles == ["Ordinary rollout note"]
