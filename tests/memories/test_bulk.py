"""POST /api/v1/memories/bulk/: up to 1000 rows, per-row errors, optional all-or-nothing."""

from memories.models import Memory

GOOD = {"space": "webshop", "title": "Use bUnit for component tests",
        "content": "Blazor components are tested with bUnit and xUnit."}


def test_valid_rows_are_kept_and_bad_rows_reported_by_index(api, space, on_commit):
    items = [
        GOOD,
        {**GOOD, "title": "x"},                       # too short after the shape check
        {**GOOD, "memory_type": "dream"},             # bad shape
        {**GOOD, "space": "nowhere", "title": "Unknown space row"},
        {**GOOD, "title": "Second good row"},
    ]
    with on_commit():
        response = api.post("/api/v1/memories/bulk/", {"items": items}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert (body["created"], body["failed"]) == (2, 3)
    results = body["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["ok"] for r in results] == [True, False, False, False, True]
    assert results[1]["errors"] == {"title": ["Must be at least 3 characters."]}
    assert "memory_type" in results[2]["errors"]
    assert results[3]["errors"] == {"space": ["No space 'nowhere'."]}
    assert set(Memory.objects.values_list("id", flat=True)) == {results[0]["id"], results[4]["id"]}
    assert set(Memory.objects.values_list("embedding_status", flat=True)) == {"ready"}


def test_atomic_bulk_writes_nothing_when_a_row_fails(api, space):
    items = [GOOD, {**GOOD, "content": "short"}]
    response = api.post("/api/v1/memories/bulk/", {"items": items, "atomic": True}, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["fields"] == {"items[1].content": ["Must be at least 10 characters."]}
    assert Memory.objects.count() == 0


def test_atomic_bulk_writes_all_when_every_row_is_valid(api, space):
    items = [{**GOOD, "title": f"Row {n} title", "content": f"Row {n}: {GOOD['content']}"} for n in range(5)]
    response = api.post("/api/v1/memories/bulk/", {"items": items, "atomic": True}, format="json")
    assert response.status_code == 201
    assert response.json()["created"] == 5
    assert Memory.objects.count() == 5


def test_duplicate_ids_within_one_request_are_caught(api, space):
    items = [{**GOOD, "id": "mem_dup_00001"}, {**GOOD, "id": "mem_dup_00001"}]
    body = api.post("/api/v1/memories/bulk/", {"items": items}, format="json").json()
    assert [r["ok"] for r in body["results"]] == [True, False]
    assert "id" in body["results"][1]["errors"]


def test_bulk_limits_are_enforced(api, space):
    assert api.post("/api/v1/memories/bulk/", {"items": []}, format="json").status_code == 400
    too_many = api.post("/api/v1/memories/bulk/", {"items": [GOOD] * 1001}, format="json")
    assert too_many.status_code == 400
    assert "items" in too_many.json()["error"]["fields"]


def test_a_thousand_rows_go_through_in_one_request(api, space):
    items = [{**GOOD, "title": f"Generated memory {n}", "content": f"Fact number {n} about the build."}
             for n in range(1000)]
    response = api.post("/api/v1/memories/bulk/", {"items": items}, format="json")
    assert response.status_code == 201
    assert Memory.objects.filter(space=space).count() == 1000
