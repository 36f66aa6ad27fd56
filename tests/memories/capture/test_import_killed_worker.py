"""An upload whose worker is killed mid-import, on a real django-q2 cluster: the import is left
`running`, the janitor fails it and deletes the upload, and the history uploaded again is
imported whole, once (docs/capture.md, "Imports that stop half-way").

The cluster is `manage.py qcluster` in its own process group, as in tests/memories/test_cluster.py.
The janitor is called with its clock moved past the job's timeout (an hour and five minutes),
rather than waited for.
"""

from __future__ import annotations

import json
import signal
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from memories.capture import runs, uploads
from memories.models import ChatImport, ChatImportStatus, ImportedConversation, Memory
from tests.memories.embeddings.test_embedding_recovery import busiest_worker
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]

CONVERSATIONS = 60
# The new import waits behind the embedding jobs of the memories the killed one made.
WAIT_SECONDS = 300


def history() -> bytes:
    """One fact a conversation, each its own: a whole import makes CONVERSATIONS memories."""
    return "".join(
        json.dumps({"conversation_id": f"c{n}", "role": "user", "content": f"I work at Company{n}."}) + "\n"
        for n in range(CONVERSATIONS)).encode()


@pytest.fixture(autouse=True)
def uploads_removed():
    """A failing test leaves no history under var/imports/ (the cluster reads the real folder)."""
    made: list[str] = []
    yield made
    for import_id in made:
        uploads.discard(import_id)


def upload(api, slug: str, made: list[str]) -> str:
    answer = api.post(f"/api/v1/spaces/{slug}/chat-imports/",
                      {"source": "jsonl", "file": SimpleUploadedFile("history.jsonl", history())},
                      format="multipart")
    assert answer.status_code == 202, answer.content
    made.append(answer.json()["id"])
    return answer.json()["id"]


def imported(space) -> int:
    return ImportedConversation.objects.filter(space=space).count()


def test_an_import_whose_worker_was_killed_is_failed_cleaned_up_and_imported_again(api, space,
                                                                                   uploads_removed):
    space.capture_sources = ["jsonl"]
    space.save()
    first = upload(api, space.slug, uploads_removed)
    cluster = start_cluster()
    try:
        # given a worker killed while it imports (some conversations committed, not all)
        wait_for(lambda: imported(space) >= 5, timeout=WAIT_SECONDS, process=cluster)
        busiest_worker(cluster).send_signal(signal.SIGKILL)
        done_before_kill = imported(space)
        assert done_before_kill < CONVERSATIONS, "the import finished before its worker could be killed"
        stuck = ChatImport.objects.get(pk=first)
        assert stuck.status == ChatImportStatus.RUNNING
        assert uploads.folder(first).exists()

        # when the janitor runs once the job's timeout and margin have passed
        assert runs.reap(now=stuck.started_at + runs.stuck_after() + timedelta(seconds=1)) == [first]

        # then the import is failed with the reason, and the history is gone from disk
        failed = ChatImport.objects.get(pk=first)
        assert failed.status == ChatImportStatus.FAILED
        assert "Upload the history again" in failed.error
        assert not uploads.folder(first).exists()

        # and the same history uploaded again is imported by the cluster's new worker, the
        # conversations already imported skipped, none twice
        again = upload(api, space.slug, uploads_removed)
        wait_for(lambda: ChatImport.objects.get(pk=again).status in {"done", "failed"},
                 timeout=WAIT_SECONDS, process=cluster)
    finally:
        stop_cluster(cluster)
    rerun = ChatImport.objects.get(pk=again)
    assert rerun.status == ChatImportStatus.DONE, rerun.error
    assert rerun.report["conversations_seen"] == CONVERSATIONS
    assert rerun.report["conversations_skipped"] >= done_before_kill
    assert imported(space) == CONVERSATIONS
    assert Memory.objects.filter(space=space).count() == CONVERSATIONS
    assert not uploads.folder(again).exists()
    # The killed run never wrote over the janitor's verdict.
    assert ChatImport.objects.get(pk=first).status == ChatImportStatus.FAILED
    assert timezone.now() - rerun.finished_at < timedelta(minutes=5)
