"""Uploaded chat histories: where they wait for their job, unpacked safely, and removed after.

A history can be one file (a Claude Code session, a ChatGPT `conversations.json`, a Cursor
`state.vscdb`, SAM JSONL) or a `.zip` of a folder (a `~/.claude/projects` tree, ChatGPT's
export archive as downloaded). Archives are unpacked member by member: names that climb out
of the folder (`../`, absolute paths) or links are refused, and the unpacked size is capped.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from core.errors import DomainError, InvalidInput


def folder(import_id: str) -> Path:
    return Path(settings.VAR_DIR) / "imports" / import_id


def store(import_id: str, upload: UploadedFile) -> Path:
    """Save the upload under var/imports/<id>/; unpack a zip. Returns what the reader reads."""
    target = folder(import_id)
    target.mkdir(parents=True, exist_ok=True)
    name = PurePosixPath(upload.name or "upload").name or "upload"
    path = target / name
    with path.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    if not zipfile.is_zipfile(path):
        return path
    unpacked = target / "unpacked"
    try:
        _unzip(path, unpacked, limit=int(settings.SAM_CHAT_IMPORT_MAX_BYTES) * 4)
    except (zipfile.BadZipFile, InvalidInput):
        discard(import_id)
        raise
    path.unlink()
    return unpacked


def located(import_id: str) -> Path:
    """What the reader reads for an import: the unpacked folder of a zip, else the one file.

    Jobs are given the import's id only, never this path: django-q2 keeps a job's arguments
    in plaintext (pickled) in its task table, and the path holds the upload's name."""
    target = folder(import_id)
    unpacked = target / "unpacked"
    if unpacked.is_dir():
        return unpacked
    files = sorted(entry for entry in target.iterdir() if entry.is_file()) if target.is_dir() else []
    if not files:
        raise DomainError("The uploaded history is no longer on the server; upload it again.")
    return files[0]


def _unzip(archive: Path, into: Path, *, limit: int) -> None:
    total = 0
    with zipfile.ZipFile(archive) as bundle:
        for member in bundle.infolist():
            parts = PurePosixPath(member.filename).parts
            is_link = (member.external_attr >> 16) & 0o170000 == 0o120000
            if member.filename.startswith("/") or ".." in parts or is_link:
                raise InvalidInput("The archive holds a path outside itself.",
                                   fields={"file": [f"Refused member '{member.filename}'."]})
            total += member.file_size
            if total > limit:
                raise InvalidInput("The archive unpacks to more than SAM accepts.",
                                   fields={"file": [f"More than {limit} bytes unpacked."]})
            if member.is_dir():
                continue
            destination = into.joinpath(*parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as source, destination.open("wb") as sink:
                shutil.copyfileobj(source, sink)


def discard(import_id: str) -> None:
    shutil.rmtree(folder(import_id), ignore_errors=True)
