"""The SAM entry JSON Schema: served at a stable URL, and every export validates against it."""

import json

import jsonschema
import pytest
from django.core.management import call_command

from memories.schema import MEMORY_ENTRY_SCHEMA
from tests.factories import make_memory

VALIDATOR = jsonschema.Draft7Validator(
    MEMORY_ENTRY_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
)


def _errors(document: dict) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(document)]


def test_schema_is_a_valid_draft7_schema():
    jsonschema.Draft7Validator.check_schema(MEMORY_ENTRY_SCHEMA)


def test_entry_missing_summary_is_rejected_naming_summary(api, space):
    # A document without "summary" is invalid, and the error names "summary".
    memory = make_memory(space)
    document = api.get(f"/api/v1/memories/{memory.id}/").json()
    del document["summary"]
    assert "'summary' is a required property" in _errors(document)


def test_schema_is_served_without_authentication(anon):
    response = anon.get("/api/v1/schema/memory-entry.json")
    assert response.status_code == 200
    assert response.json()["title"] == "SAMMemoryEntry"


def test_every_api_memory_validates(api, space):
    make_memory(space, training_examples=[
        {"user": "Need a quick pop-up after a form submit.",
         "assistant": "Use MudSnackbar for the confirmation, avoid MudDialog.",
         "assertions": ["MudSnackbar", "avoid MudDialog"]}],
        occurred_at="2026-01-19T00:00:00Z", source={"type": "doc", "ref": "wiki", "uri": "https://x.test/a"})
    make_memory(space, title="Archived one", tags=[])
    listed = api.get("/api/v1/memories/").json()["results"]
    assert len(listed) == 2
    for document in listed:
        assert _errors(document) == []


def test_exported_jsonl_validates(space, capsys):
    make_memory(space)
    archived = make_memory(space, title="Old note")
    from governance.access import SYSTEM
    from memories import services

    services.memory_archive(actor=SYSTEM, memory_id=archived.id)
    call_command("sam_export", "--include-archived")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert _errors(json.loads(line)) == []


@pytest.mark.parametrize(("field", "value"), [("confidence_score", 1.5), ("archive_flag", "no")])
def test_out_of_range_values_fail_validation(api, space, field, value):
    document = api.get(f"/api/v1/memories/{make_memory(space).id}/").json()
    document[field] = value
    assert _errors(document)
