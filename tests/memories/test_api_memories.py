"""The memories REST API through the HTTP client: create, read, list, edit, versions, archive, delete."""

import pytest

from governance import spaces as space_services
from memories.models import Memory, MemoryStats, MemoryVersion
from tests.factories import SpaceFactory, make_memory

MUD = {
    "title": "MudSnackbar preferred for alerts",
    "content": "Use MudSnackbar instead of MudDialog for alert-style notifications in Blazor UI.",
}


def create(api, **fields):
    return api.post("/api/v1/memories/", {"space": "webshop", **MUD, **fields}, format="json")


# --- create ---------------------------------------------------------------------------

def test_create_normalises_and_suggests_missing_fields(api, space):
    response = create(api, title="  MudSnackbar   preferred for alerts ",
                      canonical_phrases=["  Prefer   MudDialog  "])

    assert response.status_code == 201
    body = response.json()
    memory = body["memory"]
    assert memory["id"].startswith("mem_")
    assert memory["title"] == "MudSnackbar preferred for alerts"
    assert memory["canonical_phrases"] == ["prefer muddialog"]
    assert memory["summary"] == MUD["content"]
    # Tags are suggested only among the space's existing tags, and it has none yet.
    assert memory["tags"] == []
    assert body["suggested_fields"] == ["summary"]
    assert memory["version"] == 1
    assert memory["embedding_status"] == "pending"


def test_create_reports_each_bad_field(api, space):
    response = create(api, title="ab", content="too short", memory_type="dream", confidence_score=3,
                      canonical_phrases=["ok phrase", "no"])

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"memory_type", "confidence_score"}
    # Shape errors come first; once the shape is right, the SAM limits are checked.
    response = create(api, title="ab", content="too short", canonical_phrases=["ok phrase", "no"])
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"title", "content", "canonical_phrases[1]"}
    assert Memory.objects.count() == 0


def test_create_in_an_unknown_space_is_404(api, db):
    response = api.post("/api/v1/memories/", {"space": "nowhere", **MUD}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["fields"] == {"space": ["No space 'nowhere'."]}


def test_create_with_a_taken_id_is_409(api, space):
    assert create(api, id="mem_custom_0001").status_code == 201
    response = create(api, id="mem_custom_0001")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


def test_unknown_kind_is_rejected_and_extra_kinds_accepted(api, space, settings):
    assert create(api, kind="recipe").status_code == 400
    settings.SAM_EXTRA_KINDS = ["recipe"]
    assert create(api, kind="recipe").status_code == 201


# --- read and list --------------------------------------------------------------------

def test_get_unknown_memory_is_404_in_the_error_shape(api, db):
    response = api.get("/api/v1/memories/mem_missing000/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_list_filters_by_space_type_kind_tags_and_reliability(api, space):
    other = SpaceFactory(slug="platform")
    wanted = make_memory(space, memory_type="procedural", kind="procedure", tags=["release", "ops"],
                         reliability="confirmed")
    make_memory(space, title="Another note", tags=["release"])
    make_memory(other, title="Elsewhere", memory_type="procedural", kind="procedure",
                tags=["release", "ops"], reliability="confirmed")

    response = api.get("/api/v1/memories/", {
        "space": "webshop", "memory_type": "procedural", "kind": "procedure",
        "tags": "release,ops", "reliability": "confirmed",
    })

    assert response.status_code == 200
    assert [m["id"] for m in response.json()["results"]] == [wanted.id]


def test_list_rejects_bad_filter_values(api, db):
    response = api.get("/api/v1/memories/", {"memory_type": "dream", "archived": "maybe"})
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"memory_type", "archived"}


def test_text_search_finds_a_memory_before_its_embedding_is_ready(api, space):
    memory = make_memory(space, **MUD)
    assert memory.embedding_status == "pending"

    results = api.get("/api/v1/memories/", {"text": "muddialog notifications"}).json()["results"]

    assert [m["id"] for m in results] == [memory.id]


def test_list_is_paginated(api, space):
    for n in range(3):
        make_memory(space, title=f"Note number {n}")
    body = api.get("/api/v1/memories/", {"page_size": 2}).json()
    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"]


def test_list_query_count_does_not_grow_with_rows(api, space):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries_for_list(expected_rows: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert len(api.get("/api/v1/memories/").json()["results"]) == expected_rows
        return len(captured)

    for n in range(3):
        make_memory(space, title=f"Note number {n}")
    queries_for_list(3)  # the first request also records the token's last use
    few = queries_for_list(3)
    for n in range(3, 12):
        make_memory(space, title=f"Note number {n}")
    assert queries_for_list(12) == few


# --- edit and versions ----------------------------------------------------------------

def test_edit_increments_version_and_records_the_diff(api, space):
    memory = make_memory(space, **MUD)

    response = api.patch(f"/api/v1/memories/{memory.id}/",
                         {"version": 1, "title": "Snackbars for alerts", "reason": "shorter"},
                         format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["memory"]["version"] == 2
    assert body["changelog_diff"] == [{"path": "title", "before": MUD["title"],
                                       "after": "Snackbars for alerts", "reason": "shorter"}]
    versions = api.get(f"/api/v1/memories/{memory.id}/versions/").json()["results"]
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[1]["snapshot"]["title"] == MUD["title"]


def test_edit_with_a_stale_version_is_409_with_the_current_version(api, space):
    memory = make_memory(space, **MUD)
    api.patch(f"/api/v1/memories/{memory.id}/", {"version": 1, "title": "First edit"}, format="json")

    response = api.patch(f"/api/v1/memories/{memory.id}/", {"version": 1, "title": "Second edit"},
                         format="json")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "version_conflict"
    assert error["current_version"] == 2
    assert Memory.objects.get(pk=memory.id).title == "First edit"


def test_edit_without_version_is_400(api, space):
    memory = make_memory(space)
    response = api.patch(f"/api/v1/memories/{memory.id}/", {"title": "New title"}, format="json")
    assert response.status_code == 400
    assert "version" in response.json()["error"]["fields"]


def test_edit_that_changes_nothing_keeps_the_version(api, space):
    memory = make_memory(space, **MUD)
    response = api.patch(f"/api/v1/memories/{memory.id}/",
                         {"version": 1, "title": f"  {MUD['title']} "}, format="json")
    assert response.json()["memory"]["version"] == 1
    assert response.json()["changelog_diff"] == []


def test_edit_with_invalid_value_changes_nothing(api, space):
    memory = make_memory(space, **MUD)
    response = api.patch(f"/api/v1/memories/{memory.id}/", {"version": 1, "content": "short"},
                         format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"content": ["Must be at least 10 characters."]}
    assert Memory.objects.get(pk=memory.id).version == 1


def test_version_detail_and_unknown_version(api, space):
    memory = make_memory(space)
    assert api.get(f"/api/v1/memories/{memory.id}/versions/1/").json()["version"] == 1
    assert api.get(f"/api/v1/memories/{memory.id}/versions/7/").status_code == 404


def test_restoring_a_version_makes_a_new_version_with_its_content(api, space):
    memory = make_memory(space, **MUD)
    api.patch(f"/api/v1/memories/{memory.id}/",
              {"version": 1, "title": "Changed title", "confidence_score": 0.5}, format="json")

    response = api.post(f"/api/v1/memories/{memory.id}/versions/1/restore/", {}, format="json")

    assert response.status_code == 200
    restored = response.json()["memory"]
    assert restored["version"] == 3
    assert restored["title"] == MUD["title"]
    assert restored["confidence_score"] == 0.75
    latest = api.get(f"/api/v1/memories/{memory.id}/versions/3/").json()
    assert latest["reason"] == "restored version 1"
    assert {c["path"] for c in latest["changes"]} == {"title", "confidence_score"}


def test_restore_with_a_stale_version_guard_is_409(api, space):
    memory = make_memory(space, **MUD)
    api.patch(f"/api/v1/memories/{memory.id}/", {"version": 1, "title": "Changed title"}, format="json")
    response = api.post(f"/api/v1/memories/{memory.id}/versions/1/restore/", {"version": 1},
                        format="json")
    assert response.status_code == 409


# --- archive, restore, delete ---------------------------------------------------------

def test_archive_hides_from_default_list_and_restore_brings_back(api, space):
    memory = make_memory(space, **MUD)

    response = api.post(f"/api/v1/memories/{memory.id}/archive/", {"reason": "outdated"}, format="json")

    assert response.status_code == 200
    assert response.json()["memory"]["archive_flag"] is True
    assert response.json()["changelog_diff"][0]["path"] == "archive_flag"
    assert api.get("/api/v1/memories/").json()["count"] == 0
    archived = api.get("/api/v1/memories/", {"archived": "true"}).json()["results"]
    assert [m["id"] for m in archived] == [memory.id]
    assert archived[0]["archive_reason"] == "outdated"
    assert api.get(f"/api/v1/memories/{memory.id}/").status_code == 200

    restored = api.post(f"/api/v1/memories/{memory.id}/restore/", {}, format="json").json()["memory"]

    assert restored["archive_flag"] is False
    assert api.get("/api/v1/memories/").json()["count"] == 1


def test_archiving_twice_is_harmless(api, space):
    memory = make_memory(space)
    api.post(f"/api/v1/memories/{memory.id}/archive/", {}, format="json")
    second = api.post(f"/api/v1/memories/{memory.id}/archive/", {}, format="json")
    assert second.status_code == 200
    assert second.json()["changelog_diff"] == []


def test_delete_removes_the_memory_and_everything_derived(api, space):
    memory = make_memory(space)
    api.patch(f"/api/v1/memories/{memory.id}/", {"version": 1, "title": "Edited title"}, format="json")

    assert api.delete(f"/api/v1/memories/{memory.id}/").status_code == 204

    assert not Memory.objects.filter(pk=memory.id).exists()
    assert not MemoryVersion.objects.filter(memory_id=memory.id).exists()
    assert not MemoryStats.objects.filter(memory_id=memory.id).exists()
    assert api.get(f"/api/v1/memories/{memory.id}/").status_code == 404
    assert api.delete(f"/api/v1/memories/{memory.id}/").status_code == 404


# --- spaces and auth ------------------------------------------------------------------

def test_spaces_create_list_and_duplicate(api, db):
    created = api.post("/api/v1/spaces/", {"slug": "team-x", "name": "Team X", "kind": "project"},
                       format="json")
    assert created.status_code == 201
    assert api.post("/api/v1/spaces/", {"slug": "team-x", "name": "Again"}, format="json").status_code == 409
    assert api.post("/api/v1/spaces/", {"slug": "bad slug!", "name": "x", "kind": "moon"},
                    format="json").json()["error"]["fields"].keys() == {"slug", "kind"}
    assert [s["slug"] for s in api.get("/api/v1/spaces/").json()["results"]] == ["team-x"]


@pytest.mark.parametrize(("method", "url"), [
    ("get", "/api/v1/memories/"), ("post", "/api/v1/memories/"), ("get", "/api/v1/spaces/"),
    ("post", "/api/v1/memories/bulk/"),
])
def test_anonymous_callers_get_401(anon, db, method, url):
    response = getattr(anon, method)(url)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


# --- redaction ----------------------------------------------------------------------------

def test_a_write_is_redacted_before_storage_and_reports_where(api, space):
    # docs/redaction.md's example: "Email me at bob@example.com" is stored as "Email me at [email]".
    response = api.post("/api/v1/memories/", {
        "space": "webshop", "title": "Contact for refunds",
        "content": "Email me at bob@example.com",
        "metadata": {"owner": "reach me on bob@example.com"},
    }, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["memory"]["content"] == "Email me at [email]"
    assert body["memory"]["metadata"] == {"owner": "reach me on [email]"}
    report = {(r["path"], r["kind"], r["start"], r["end"]) for r in body["redaction_report"]}
    assert ("content", "email", 12, 27) in report
    assert ("metadata.owner", "email", 12, 27) in report
    # The suggested summary and phrases come from the redacted text.
    assert "bob@" not in body["memory"]["summary"]
    assert not any("bob" in phrase for phrase in body["memory"]["canonical_phrases"])


def test_allowlists_keep_named_ids(api, space):
    from governance.access import SYSTEM

    space_services.space_update(actor=SYSTEM, slug="webshop", changes={"redaction_allowlist": ["@sam-bot"]})
    response = api.post("/api/v1/memories/", {
        "space": "webshop", "title": "Bots that post releases",
        "content": "Release notes are posted by @sam-bot and reviewed by @release-captain.",
        "security_context": {"allowlist": ["@release-captain"]},
    }, format="json")
    assert response.json()["memory"]["content"] == (
        "Release notes are posted by @sam-bot and reviewed by @release-captain.")
    without = api.post("/api/v1/memories/", {
        "space": "webshop", "title": "Bots that post releases again",
        "content": "Release notes are posted by @sam-bot and reviewed by @release-captain.",
    }, format="json")
    assert "@release-captain" not in without.json()["memory"]["content"]
    assert "@sam-bot" in without.json()["memory"]["content"]
