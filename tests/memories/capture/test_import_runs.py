"""An import's run: claimed once, finished once, and failed by the janitor when its job died
(memories.capture.runs; docs/capture.md, "Imports that stop half-way").

Jobs run inline here; tests/memories/capture/test_import_killed_worker.py kills a real worker.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule

from memories.capture import conversations, requeue, runs, uploads
from memories.models import ChatImport, ChatImportStatus, Memory
from memories.tasks import chat_import_run, chat_imports_reap

pytestmark = pytest.mark.django_db

HISTORY = json.dumps({"conversation_id": "c1", "role": "user", "content": "I speak German."}).encode()


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    """Uploads wait under the test's own folder."""
    settings.VAR_DIR = tmp_path


@pytest.fixture
def capturing(space):
    space.capture_sources = ["jsonl"]
    space.save()
    return space


def queued(space, user, name: str = "history.jsonl") -> ChatImport:
    """An upload stored and queued, its job not yet run (as when the worker has not taken it)."""
    chat_import = ChatImport.objects.create(space=space, source="jsonl", file_name=name, created_by=user)
    uploads.store(chat_import.pk, SimpleUploadedFile(name, HISTORY))
    return chat_import


def upload_path(chat_import: ChatImport) -> str:
    return str(uploads.folder(chat_import.pk) / chat_import.file_name)


def running_since(chat_import: ChatImport, started_at) -> ChatImport:
    """The import as a job that claimed it at `started_at` and then died leaves it."""
    ChatImport.objects.filter(pk=chat_import.pk).update(status=ChatImportStatus.RUNNING,
                                                        started_at=started_at)
    return ChatImport.objects.get(pk=chat_import.pk)


def test_a_job_delivered_twice_imports_once(capturing, user):
    chat_import = queued(capturing, user)
    path = upload_path(chat_import)

    first = chat_import_run(import_id=chat_import.pk, path=path)
    again = chat_import_run(import_id=chat_import.pk, path=path)

    assert first["status"] == "done"
    assert again["status"] == "not queued"
    assert Memory.objects.count() == 1
    stored = ChatImport.objects.get(pk=chat_import.pk)
    assert stored.started_at is not None
    assert stored.finished_at >= stored.started_at


def test_a_job_finding_its_import_running_leaves_it_to_the_run_that_claimed_it(capturing, user):
    chat_import = running_since(queued(capturing, user), timezone.now())

    assert runs.run(chat_import.pk, lambda _: {"ran": True}) is None

    stored = ChatImport.objects.get(pk=chat_import.pk)
    assert stored.status == ChatImportStatus.RUNNING
    assert stored.report == {}
    assert uploads.folder(chat_import.pk).exists()  # the claiming run still reads it


def test_the_janitor_fails_an_import_running_past_its_job_s_timeout_and_deletes_the_upload(capturing, user,
                                                                                            on_commit):
    now = timezone.now()
    limit = runs.stuck_after()
    dead = running_since(queued(capturing, user, "dead.jsonl"), now - limit - timedelta(seconds=1))
    alive = running_since(queued(capturing, user, "alive.jsonl"), now - limit + timedelta(seconds=60))
    waiting = queued(capturing, user, "waiting.jsonl")
    ChatImport.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(days=2))

    with on_commit():
        assert runs.reap(now=now) == [dead.pk]

    failed = ChatImport.objects.get(pk=dead.pk)
    assert failed.status == ChatImportStatus.FAILED
    assert failed.finished_at is not None
    assert "Upload the history again" in failed.error
    assert not uploads.folder(dead.pk).exists()
    assert ChatImport.objects.get(pk=alive.pk).status == ChatImportStatus.RUNNING
    assert uploads.folder(alive.pk).exists()
    # A queued import waits for its worker however long the queue is: not the janitor's.
    assert ChatImport.objects.get(pk=waiting.pk).status == ChatImportStatus.QUEUED


def test_an_import_running_from_before_start_times_were_kept_is_judged_by_its_creation(capturing, user):
    old = running_since(queued(capturing, user), None)
    long_ago = timezone.now() - runs.stuck_after() - timedelta(minutes=1)
    ChatImport.objects.filter(pk=old.pk).update(created_at=long_ago)

    assert runs.reap() == [old.pk]


def test_the_janitor_s_limit_is_the_job_timeout_or_the_cluster_s_if_longer_plus_a_margin(settings):
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 60}
    assert runs.stuck_after() == timedelta(seconds=runs.JOB_TIMEOUT_SECONDS + runs.STUCK_MARGIN_SECONDS)

    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 7200}
    assert runs.stuck_after() == timedelta(seconds=7200 + runs.STUCK_MARGIN_SECONDS)


def test_a_dry_run_names_the_stuck_imports_and_changes_nothing(capturing, user):
    stuck = running_since(queued(capturing, user), timezone.now() - runs.stuck_after() - timedelta(minutes=1))

    assert runs.reap(dry_run=True) == [stuck.pk]

    assert ChatImport.objects.get(pk=stuck.pk).status == ChatImportStatus.RUNNING
    assert uploads.folder(stuck.pk).exists()


def test_a_run_that_ends_after_the_janitor_failed_it_keeps_the_janitor_s_verdict(capturing, user):
    chat_import = queued(capturing, user)

    def work(claimed: ChatImport) -> dict:
        # The janitor runs while the job is still going (a job slower than any should be).
        runs.reap(now=timezone.now() + runs.stuck_after() + timedelta(seconds=1))
        return {"memories_created": 0}

    ended = runs.run(chat_import.pk, work)

    assert ended.status == ChatImportStatus.FAILED  # what the job reports, too
    stored = ChatImport.objects.get(pk=chat_import.pk)
    assert stored.status == ChatImportStatus.FAILED
    assert stored.report == {}
    assert "job stopped" in stored.error


def test_a_job_stopped_by_its_timeout_records_why_and_still_deletes_the_upload(capturing, user):
    chat_import = queued(capturing, user)

    def work(claimed: ChatImport) -> dict:
        raise SystemExit("Task exceeded maximum timeout value")  # django-q2's TimeoutException is one

    with pytest.raises(SystemExit):
        runs.run(chat_import.pk, work)

    stored = ChatImport.objects.get(pk=chat_import.pk)
    assert stored.status == ChatImportStatus.FAILED
    assert "timeout" in stored.error
    assert not uploads.folder(chat_import.pk).exists()


def test_a_stuck_posted_conversation_is_to_be_posted_again():
    assert conversations.SOURCE == runs.POSTED_SOURCE
    assert "Post the conversation again" in runs.stuck_message(conversations.SOURCE)


def test_the_import_failed_as_stuck_shows_why_and_a_new_upload_imports_the_history(api, capturing, user,
                                                                                   on_commit):
    stuck = running_since(queued(capturing, user), timezone.now() - runs.stuck_after() - timedelta(minutes=1))
    with on_commit():
        runs.reap()

    shown = api.get(f"/api/v1/chat-imports/{stuck.pk}/").json()
    assert shown["started_at"] is not None
    assert shown["status"] == "failed"
    assert shown["extraction_done"]
    assert "Upload the history again" in shown["error"]
    with on_commit():
        again = api.post(f"/api/v1/spaces/{capturing.slug}/chat-imports/",
                         {"source": "jsonl", "file": SimpleUploadedFile("history.jsonl", HISTORY)},
                         format="multipart")
    assert api.get(f"/api/v1/chat-imports/{again.json()['id']}/").json()["status"] == "done"
    assert Memory.objects.count() == 1


def test_the_janitor_is_scheduled_and_runs_from_sam_maintenance(capturing, user):
    call_command("sam_schedules", verbosity=0)
    schedule = Schedule.objects.get(func="memories.tasks.chat_imports_reap")
    assert schedule.schedule_type == Schedule.MINUTES
    assert schedule.minutes == 10
    stuck = running_since(queued(capturing, user), timezone.now() - runs.stuck_after() - timedelta(minutes=1))

    out = io.StringIO()
    call_command("sam_maintenance", "stuck-imports", stdout=out)

    report = json.loads(out.getvalue())
    assert report["failed"] == [stuck.pk]
    assert report["stuck_after_seconds"] == runs.JOB_TIMEOUT_SECONDS + runs.STUCK_MARGIN_SECONDS
    assert ChatImport.objects.get(pk=stuck.pk).status == ChatImportStatus.FAILED


def test_an_import_whose_job_never_reached_the_queue_is_enqueued_again_and_imported_once(capturing, user,
                                                                                         on_commit):
    # Queued and committed, but the process died before its job was enqueued: nothing runs it.
    lost = queued(capturing, user, "lost.jsonl")
    ChatImport.objects.filter(pk=lost.pk).update(
        created_at=timezone.now() - requeue.QUEUED_GRACE - timedelta(seconds=1))
    recent = queued(capturing, user, "recent.jsonl")

    with on_commit():
        answer = chat_imports_reap()

    assert answer == {"failed": [], "requeued": [lost.pk]}
    imported = ChatImport.objects.get(pk=lost.pk)
    assert imported.status == ChatImportStatus.DONE
    assert not uploads.folder(lost.pk).exists()
    assert Memory.objects.count() == 1
    # Younger than the grace: its own job is on its way.
    assert ChatImport.objects.get(pk=recent.pk).status == ChatImportStatus.QUEUED
    # The first job, delivered after all, finds the import ended and imports nothing more.
    assert chat_import_run(import_id=lost.pk)["status"] == "not queued"
    assert Memory.objects.count() == 1


def test_the_stuck_imports_command_names_the_imports_it_would_enqueue_again_on_a_dry_run(capturing, user):
    lost = queued(capturing, user)
    ChatImport.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(hours=2))
    out = io.StringIO()

    call_command("sam_maintenance", "stuck-imports", "--dry-run", stdout=out)

    assert json.loads(out.getvalue())["requeued"] == [lost.pk]
    assert ChatImport.objects.get(pk=lost.pk).status == ChatImportStatus.QUEUED
