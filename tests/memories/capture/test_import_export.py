"""sam_import / sam_export: JSON lines round trip, row-by-row report, id remapping."""

import json

import pytest
from django.core.management import CommandError, call_command

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from memories.capture.transfer import memories_export
from memories.models import Memory
from tests.factories import SpaceFactory, make_memory


def write_lines(tmp_path, rows) -> str:
    path = tmp_path / "import.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_export_then_import_into_another_space_round_trips(space, tmp_path, capsys):
    original = make_memory(space, tags=["testing"], reliability="confirmed", confidence_score=0.9)
    call_command("sam_export", "-o", str(tmp_path / "out.jsonl"))
    exported = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    SpaceFactory(slug="copy")
    exported["space"] = "copy"

    call_command("sam_import", write_lines(tmp_path, [exported]), "--json")

    report = json.loads(capsys.readouterr().out)
    assert report["created"] == 1
    # The id was taken (the original still exists), so the copy got a new one.
    assert report["remapped"][0]["from"] == original.id
    copy = Memory.objects.with_related().get(pk=report["remapped"][0]["to"])
    assert (copy.title, copy.tags, copy.reliability, copy.stats.confidence) == (
        original.title, ["testing"], "confirmed", 0.9)


def test_bad_rows_are_reported_by_line_and_good_rows_kept(space, tmp_path, capsys):
    rows = [
        {"space": "webshop", "title": "Good row one", "content": "This row is perfectly fine."},
        "{not json",
        {"space": "webshop", "title": "x", "content": "Title too short here."},
        ["not", "an", "object"],
        {"title": "No space given", "content": "Lands in the default space."},
        {"space": "webshop", "title": "Archived row", "content": "Imported already archived.",
         "archive_flag": True},
    ]
    with pytest.raises(CommandError, match="3 rows failed"):
        call_command("sam_import", write_lines(tmp_path, rows), "--space", "webshop")

    out = capsys.readouterr().out
    assert "rows: 6  created: 3  failed: 3" in out
    assert "row 2: non_field_errors: Not valid JSON" in out
    assert "row 3: title: Must be at least 3 characters." in out
    assert "row 4: non_field_errors: Each row must be a JSON object." in out
    assert set(Memory.objects.values_list("title", "archived")) == {
        ("Good row one", False), ("No space given", False), ("Archived row", True)}


def test_atomic_import_writes_nothing_when_a_row_fails(space, tmp_path):
    rows = [{"space": "webshop", "title": "Fine row", "content": "This row is fine."},
            {"space": "webshop", "title": "Fine row 2", "content": "short"}]
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("sam_import", write_lines(tmp_path, rows), "--atomic")
    assert Memory.objects.count() == 0


def test_export_filters_by_space_and_skips_archived_by_default(space, capsys):
    other = SpaceFactory(slug="other")
    make_memory(space)
    make_memory(other, title="In other space")
    call_command("sam_export", "--space", "other")
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["title"] for line in lines] == ["In other space"]


def test_imports_and_exports_are_audited_and_imported_text_is_redacted(space, tmp_path, capsys):
    from governance.audit.models import AuditEvent

    rows = [{"space": "webshop", "title": "Vendor contact",
             "content": "Ask ana.silva@vendor.example for the invoice export format."}]
    call_command("sam_import", write_lines(tmp_path, rows), "--json")
    created = Memory.objects.get(space=space)
    assert "ana.silva@vendor.example" not in created.content
    assert "[email]" in created.content

    call_command("sam_export", "-o", str(tmp_path / "out.jsonl"))

    imported = AuditEvent.objects.get(action="import")
    exported = AuditEvent.objects.get(action="export")
    assert imported.space_slug == exported.space_slug == "webshop"
    assert imported.payload_data["after"] == {"memories": 1, "rows": 1, "failed": 0}
    assert exported.payload_data["after"]["memories"] == 1


def test_an_export_stopped_early_is_audited_as_incomplete(space):
    """Given two memories, when a reader takes one row of the export and stops, then the
    export is audited with what was read and marked incomplete."""
    make_memory(space, title="First exported memory")
    make_memory(space, title="Second exported memory")

    stream = memories_export(actor=SYSTEM, spaces=[], include_archived=False)
    next(stream)
    stream.close()

    exported = AuditEvent.objects.get(action="export")
    assert exported.space_slug == "webshop"
    assert exported.payload_data["after"] == {"memories": 1, "include_archived": False, "complete": False}


def test_an_export_that_matches_nothing_is_audited(space, user):
    """Given a space with no memories, when it is exported (by its owner, and by a command
    over every space), then each export is on record with 0 memories."""
    assert list(memories_export(actor=user, spaces=["webshop"], include_archived=True)) == []
    call_command("sam_export", "--space", "no-such-space")

    named, unnamed = AuditEvent.objects.filter(action="export").order_by("id")
    assert (named.space_slug, named.actor_label) == ("webshop", "owner")
    assert named.payload_data["after"] == {"memories": 0, "include_archived": True, "complete": True}
    assert (unnamed.space_id, unnamed.actor_label) == (None, "system")
    assert unnamed.payload_data["after"]["memories"] == 0
    assert unnamed.payload_data["after"]["spaces"] == ["no-such-space"]


def test_an_import_across_an_incognito_space_pairs_every_row_with_its_own_memory(space, tmp_path, capsys):
    """Given rows for a normal space, an incognito space, and the normal space again (the
    last one archived), when they are imported, then the incognito row is reported as
    discarded and each kept row gets its own memory."""
    SpaceFactory(slug="hushed")
    space_services.space_update(actor=SYSTEM, slug="hushed", changes={"mode": "incognito"})
    rows = [
        {"space": "webshop", "title": "Kept first row", "content": "The first row lands in webshop."},
        {"space": "hushed", "title": "Incognito row", "content": "This row is answered but not kept."},
        {"space": "webshop", "title": "Kept archived row", "content": "The third row lands archived.",
         "archive_flag": True},
    ]

    call_command("sam_import", write_lines(tmp_path, rows), "--json")

    report = json.loads(capsys.readouterr().out)
    assert (report["created"], report["discarded"], report["failed"], report["archived"]) == (2, 1, 0, 1)
    assert set(Memory.objects.values_list("title", "archived")) == {
        ("Kept first row", False), ("Kept archived row", True)}
