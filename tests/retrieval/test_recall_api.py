"""POST /api/v1/recall/ on the real model and Postgres: ranking, explanations, fail-safe,
conflicts, dedupe, determinism, scope, side effects and the result cache."""

from django.core.cache import cache

from governance.access import SYSTEM
from memories import services
from memories.models import MemoryStats
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, make_memory
from tests.retrieval.conftest import AS_OF, MEMORIES


def recall(api, **body):
    response = api.post("/api/v1/recall/", {"as_of": AS_OF, "track": False, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_paraphrase_recalls_the_right_memory_with_its_reason(api, store):
    body = recall(api, query="how do I show a quick confirmation toast after saving?",
                  active_task="Add a save confirmation to the MudBlazor product editor")

    assert body["action"] == "recall"
    assert body["ok"] is True
    ranked = body["data"]["ranked_memory_list"]
    assert ranked[0]["title"] == "MudSnackbar preferred for alerts"
    first = ranked[0]
    assert set(first["signals"]) == {"semantic", "lexical", "exact", "tags", "recency", "confidence",
                                     "importance", "access", "time", "graph"}
    assert first["rationale"].startswith("Recalled for ")
    cue = "relevant to the current task “Add a save confirmation to the MudBlazor product…”."
    assert first["rationale"].endswith(cue)
    assert body["ui_summary"]["headline"].endswith("recalled")


def test_an_exact_phrase_in_the_task_sets_the_exact_signal(api, store):
    body = recall(api, query="deploy stuck", active_task="check why the migration locked the table")
    top = body["data"]["ranked_memory_list"][0]
    assert top["title"] == "Create Postgres indexes concurrently"
    assert top["signals"]["exact"] == 0.5
    assert "phrase: migration locked the table" in top["highlights"]


def test_nothing_relevant_gives_an_empty_list_and_a_prefill(api, store):
    body = recall(api, query="lattice quantum chromodynamics on GPUs",
                  active_task="Write the lattice QCD benchmark plan")
    assert body["data"]["ranked_memory_list"] == []
    follow_up = body["data"]["suggested_follow_up_actions"][0]
    assert follow_up["type"] == "create_new_memory_prefill"
    assert follow_up["payload"]["title"] == "Write the lattice QCD benchmark plan"
    assert follow_up["payload"]["canonical_phrases"]


def test_opposite_preferences_are_flagged_and_clarification_suggested(api, store, space, on_commit):
    with on_commit():
        rival = make_memory(space, title="MudDialog for alerts", tags=["ui"],
                            content="Team decision: prefer MudDialog for alert notifications in Blazor.",
                            canonical_phrases=["prefer muddialog"])
    cache.clear()
    body = recall(api, query="should alerts use MudDialog or MudSnackbar in Blazor?", k=5)
    ranked = {m["id"]: m for m in body["data"]["ranked_memory_list"]}
    snack = store["MudSnackbar preferred for alerts"].id
    assert ranked[rival.id]["conflict"]["with"] == snack
    assert ranked[snack]["conflict"]["subject"] == ["muddialog"]
    assert "conflicts with another recalled memory" in ranked[rival.id]["rationale"]
    actions = [a for a in body["data"]["suggested_follow_up_actions"] if a["type"] == "clarify_conflict"]
    assert actions[0]["payload"]["memory_ids"] == sorted([snack, rival.id])


def test_near_duplicates_keep_the_more_confident_one(api, store, space, on_commit):
    original = store["Prefer pytest fixtures over setUp"]
    space.duplicate_policy = "keep"  # two rows with one text, as a space that keeps them holds
    space.save()
    with on_commit():
        copy = make_memory(space, title="Prefer pytest fixtures over setUp methods", tags=["testing"],
                           content=original.content, confidence_score=0.95)
    cache.clear()
    ids = [m["id"] for m in recall(api, query="pytest fixtures or setUp?", k=5)["data"]["ranked_memory_list"]]
    assert copy.id in ids
    assert original.id not in ids


def test_the_same_store_and_inputs_give_the_same_answer(api, store):
    request = dict(query="index migration locked writes", k=4)
    first = recall(api, **request)["data"]["ranked_memory_list"]
    cache.clear()
    second = recall(api, **request)["data"]["ranked_memory_list"]
    assert [(m["id"], m["score"], m["rationale"], m["signals"]) for m in first] == \
        [(m["id"], m["score"], m["rationale"], m["signals"]) for m in second]


def test_recall_only_looks_in_the_requested_spaces_and_skips_archived(api, store, space, on_commit):
    other = SpaceFactory(slug="elsewhere")
    with on_commit():
        stranger = make_memory(other, title="MudSnackbar preferred for alerts", tags=["ui"],
                               content=MEMORIES[0]["content"])
    cache.clear()
    ids = {m["id"] for m in recall(api, query="snackbar alerts", spaces=["webshop"], k=10)
           ["data"]["ranked_memory_list"]}
    assert stranger.id not in ids
    with on_commit():
        services.memory_archive(actor=SYSTEM, memory_id=store["MudSnackbar preferred for alerts"].id)
    ids = {m["id"] for m in recall(api, query="snackbar alerts", spaces=["webshop"], k=10)
           ["data"]["ranked_memory_list"]}
    assert store["MudSnackbar preferred for alerts"].id not in ids
    # A space that does not exist and one the caller holds no role in answer alike.
    for slug in ("nowhere", "elsewhere"):
        bad = api.post("/api/v1/recall/", {"query": "x", "spaces": [slug]}, format="json")
        assert bad.status_code == 404
        assert bad.json()["error"]["fields"] == {"spaces": [f"No space '{slug}'."]}


def test_a_memory_is_recalled_by_text_before_its_embedding_is_ready(api, space):
    cache.clear()
    pending = make_memory(space, title="Feature flags live in App Configuration",
                          content="Feature flags are read from Azure App Configuration, cached 30 s.")
    assert pending.embedding_status == "pending"
    ranked = recall(api, query="where do feature flags live?")["data"]["ranked_memory_list"]
    assert [m["id"] for m in ranked] == [pending.id]
    assert ranked[0]["signals"]["semantic"] == 0.0


def test_tracking_counts_access_and_stores_the_event_without_raising_confidence(api, store):
    memory = store["Dana is vegetarian"]
    MemoryStats.objects.filter(memory=memory).update(confidence=0.5)
    cache.clear()
    body = recall(api, query="what can Dana eat? she avoids meat", track=True)
    assert body["data"]["ranked_memory_list"][0]["id"] == memory.id

    stats = MemoryStats.objects.get(memory=memory)
    assert stats.access_count == 1
    assert stats.last_accessed_at is not None
    assert stats.confidence == 0.5  # being found is not being right (docs/lifecycle.md)
    event = RecallEvent.objects.get()
    assert event.memory_ids[0] == memory.id
    assert event.items[0]["rationale"] == body["data"]["ranked_memory_list"][0]["rationale"]
    assert event.query_text.startswith("what can Dana eat?")


def test_results_are_cached_until_a_write_to_the_space(api, store, space, on_commit):
    cache.clear()
    first = recall(api, query="index migration locked writes")
    assert first["data"]["cached"] is False
    again = recall(api, query="index migration locked writes")
    assert again["data"]["cached"] is True
    assert again["data"]["ranked_memory_list"] == first["data"]["ranked_memory_list"]

    with on_commit():
        services.memory_update(actor=SYSTEM, memory_id=store["Create Postgres indexes concurrently"].id,
                               expected_version=1, changes={"importance": 0.9})
    after = recall(api, query="index migration locked writes")
    assert after["data"]["cached"] is False


def test_query_types_recent_topic_and_timeline(api, store):
    recent = recall(api, query_type="recent", k=2)["data"]["ranked_memory_list"]
    assert len(recent) == 2
    topic = recall(api, query_type="topic", topic="diet")["data"]["ranked_memory_list"]
    assert [m["title"] for m in topic] == ["Dana is vegetarian"]
    timeline = recall(api, query_type="timeline", filters={"after": "2000-01-01T00:00:00Z"}, k=10)
    assert len(timeline["data"]["ranked_memory_list"]) == 4
    bad = api.post("/api/v1/recall/", {"query_type": "timeline"}, format="json")
    assert bad.status_code == 400


def test_bad_requests_get_field_errors(api, db):
    response = api.post("/api/v1/recall/", {"k": 0, "profile": "best", "weights": {"vibes": 1},
                                            "current_conversation": [{"speaker": "robot"}]}, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) >= {"k", "profile", "weights",
                                                       "current_conversation[0].speaker"}
    empty = api.post("/api/v1/recall/", {}, format="json")
    assert empty.status_code == 400
    assert "query" in empty.json()["error"]["fields"]
