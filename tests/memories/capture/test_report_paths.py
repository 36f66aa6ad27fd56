"""What an import stores keeps no server path: its report, its error and its file name are
sealed, and the paths in them are made relative to the upload (memories.capture.report_paths)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from governance.crypto import cipher
from memories.capture import report_paths, uploads
from memories.models import ChatImport

HOME = str(Path.home())


def test_a_path_under_the_upload_is_named_from_the_upload_s_root():
    upload = uploads.folder("imp_1")
    assert report_paths.strip_text(f"{upload}/unpacked/projects/s1.jsonl: bad line 3", upload=upload) == (
        "projects/s1.jsonl: bad line 3")
    assert report_paths.strip_text(f"no such file {upload}/history.jsonl", upload=upload) == (
        "no such file history.jsonl")
    assert report_paths.strip_text(f"cannot open {upload}", upload=upload) == "cannot open ."


def test_var_and_any_home_folder_lose_their_server_names():
    var = str(Path(settings.VAR_DIR))
    text = (f"model at {var}/models/x, logs in /home/alice/.claude/projects/p.jsonl, "
            f"and /Users/bob/state.vscdb and /root/q but not /rootfs/x")
    assert report_paths.strip_text(text) == (
        "model at var/models/x, logs in ~/.claude/projects/p.jsonl, "
        "and ~/state.vscdb and ~/q but not /rootfs/x")
    assert HOME not in report_paths.strip_text(f"{HOME}/notes.txt")


def test_json_is_walked_and_keeps_its_shape():
    upload = uploads.folder("imp_2")
    report = {"errors": [{"origin": f"{upload}/unpacked/a.jsonl", "item": "line 2", "reason": "not JSON"}],
              "memories_created": 3, "rejected": [], "dry_run": False}
    assert report_paths.strip(report, upload=upload) == {
        "errors": [{"origin": "a.jsonl", "item": "line 2", "reason": "not JSON"}],
        "memories_created": 3, "rejected": [], "dry_run": False}


@pytest.mark.django_db
def test_an_import_stores_its_name_report_and_error_sealed_and_without_server_paths(space, user):
    # Given an import whose report and error name server paths and whose name holds folders
    chat_import = ChatImport(space=space, source="jsonl", file_name="/home/alice/exports/history.jsonl",
                             created_by=user)
    upload = uploads.folder(chat_import.pk)
    chat_import.report = {"errors": [{"origin": f"{upload}/unpacked/s1.jsonl", "item": "line 1",
                                      "reason": f"cannot read {HOME}/.claude/x"}]}
    chat_import.error = f"failed at {upload}/history.jsonl"

    # When it is saved
    chat_import.save()

    # Then it reads back without the folders and paths
    stored = ChatImport.objects.get(pk=chat_import.pk)
    assert stored.file_name == "history.jsonl"
    assert stored.report == {"errors": [{"origin": "s1.jsonl", "item": "line 1",
                                         "reason": "cannot read ~/.claude/x"}]}
    assert stored.error == "failed at history.jsonl"
    # ...and the database holds each sealed under the space's key
    with connection.cursor() as cursor:
        cursor.execute("SELECT file_name, report, error FROM memories_chatimport WHERE id = %s",
                       [chat_import.pk])
        row = cursor.fetchone()
    for raw, column in zip(row, ("file_name", "report", "error"), strict=True):
        assert b"history" not in bytes(raw), column
        assert b"claude" not in bytes(raw), column
        assert cipher.key_id_of(bytes(raw)) is not None


@pytest.mark.django_db
def test_sealing_existing_rows_cleans_them_and_running_it_again_changes_nothing(space):
    from governance.crypto.migration import seal_columns

    # Given a table of plaintext rows, as a column was before its data migration
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE old_imports (id varchar(40) PRIMARY KEY, space_id bigint, "
                       "file_name varchar(255), report jsonb)")
        cursor.execute("INSERT INTO old_imports VALUES ('imp_9', %s, 'exports/history.jsonl', %s)",
                       [space.pk, '{"errors": [{"origin": "/home/alice/h.jsonl"}]}'])

    # When the rows are sealed, cleaned on the way, and then sealed again
    def seal() -> None:
        with connection.schema_editor() as editor:
            seal_columns(editor, table="old_imports", space_sql="t.space_id",
                         columns={"file_name": "text", "report": "json"},
                         clean={"file_name": lambda pk, name: Path(name).name,
                                "report": lambda pk, report: report_paths.strip(report)})

    def stored() -> tuple[bytes, bytes]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT file_name, report FROM old_imports")
            name, report = cursor.fetchone()
        return bytes(name), bytes(report)

    seal()
    once = stored()
    seal()

    # Then each value is sealed under the space's key, cleaned, and the second run left it as it was
    assert cipher.open_text(once[0], context="old_imports.file_name") == "history.jsonl"
    assert cipher.open_json(once[1], context="old_imports.report") == {"errors": [{"origin": "~/h.jsonl"}]}
    assert stored() == once


@pytest.mark.django_db(transaction=True)
def test_a_queued_import_job_carries_the_import_id_and_not_the_upload_s_name(
        api, space, enqueue_to_the_broker):
    # Given an upload whose file name is a word of its own
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django_q.brokers import get_broker
    from django_q.signing import SignedPackage

    space.capture_sources = ["jsonl"]
    space.save()
    history = b'{"conversation_id": "c1", "role": "user", "content": "I speak German."}\n'
    answer = api.post("/api/v1/spaces/webshop/chat-imports/",
                      {"source": "jsonl", "file": SimpleUploadedFile("quarzlampe-history.jsonl", history)},
                      format="multipart")
    assert answer.status_code == 202, answer.content

    # When its queued job is read from the broker (kept there in plaintext, pickled)
    broker = get_broker()
    queued = [SignedPackage.loads(package[1]) for package in broker.dequeue() or []]

    # Then the job names the import and nothing of the file, which waits where the job finds it
    jobs = [task for task in queued if task["func"] == "memories.tasks.chat_import_run"]
    assert [task["kwargs"]["import_id"] for task in jobs] == [answer.json()["id"]]
    assert "quarzlampe" not in repr(queued)
    assert uploads.located(answer.json()["id"]).name == "quarzlampe-history.jsonl"
    uploads.discard(answer.json()["id"])
