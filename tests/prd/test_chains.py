"""Thinking chains through the HTTP API: thoughts, revisions, branches, completion with its
summary and memories, and recall_reasoning on the real embedding model."""

import json

import pytest

from governance.audit.models import AuditEvent
from prd.models import FormedMemory, ThinkingChain
from tests.factories import SpaceFactory
from tests.prd.conftest import CHAINS, appended, started


def start_chain(api, query: str = "How should checkout retry failed payments?", **fields):
    response = api.post(CHAINS, {"space": "webshop", "query": query, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def think(api, chain_id: str, content: str, **fields):
    return api.post(f"{CHAINS}{chain_id}/thoughts/", {"content": content, **fields}, format="json")


def reasoned(api, on_commit, query: str, *thoughts: str, revise_last: str | None = None) -> dict:
    chain = start_chain(api, query)
    for content in thoughts:
        assert think(api, chain["id"], content).status_code == 201
    if revise_last:
        assert think(api, chain["id"], revise_last, revises=len(thoughts)).status_code == 201
    with on_commit():
        assert api.post(f"{CHAINS}{chain['id']}/complete/").status_code == 200
    return chain


def test_a_chain_collects_numbered_thoughts_with_revisions_and_branches(api, space):
    chain = start_chain(api, agent_id="claude-1")
    assert chain["id"].startswith("chain_")
    assert chain["status"] == "active"
    think(api, chain["id"], "Retry every payment three times")
    think(api, chain["id"], "Card declines must not be retried", number=2)
    revised = think(api, chain["id"], "Retry only network errors, never declines", revises=1)
    branch = think(api, chain["id"], "Or let Stripe's smart retries do it", branch_id="stripe", branch_from=1)

    assert revised.status_code == branch.status_code == 201
    thoughts = branch.json()["thoughts"]
    shape = [(t["number"], t["is_revision"], t["revises"], t["branch_id"], t["branch_from"])
             for t in thoughts]
    assert shape == [(1, False, None, None, None), (2, False, None, None, None), (3, True, 1, None, None),
                     (4, False, None, "stripe", 1)]


@pytest.mark.parametrize(("fields", "status", "bad"), [
    ({"revises": 5}, 400, "revises"),
    ({"is_revision": True}, 400, "revises"),
    ({"branch_id": "alt"}, 400, "branch_from"),
    ({"branch_from": 1}, 400, "branch_from"),
    ({"number": 1}, 409, "number"),
    ({"content": ""}, 400, "content"),
])
def test_bad_thoughts_are_refused_with_the_field_named(api, space, fields, status, bad):
    chain = start_chain(api)
    think(api, chain["id"], "first")
    response = api.post(f"{CHAINS}{chain['id']}/thoughts/", {"content": "second", **fields}, format="json")

    assert response.status_code == status
    assert bad in response.json()["error"]["fields"]
    assert len(ThinkingChain.objects.get(pk=chain["id"]).thoughts) == 1


def test_closed_chains_take_no_thoughts_and_states_do_not_cross(api, space, on_commit):
    empty = start_chain(api)
    assert api.post(f"{CHAINS}{empty['id']}/complete/").status_code == 409
    assert api.post(f"{CHAINS}{empty['id']}/abandon/", {"reason": "wrong question"}, format="json").json()[
        "abandon_reason"] == "wrong question"
    assert api.post(f"{CHAINS}{empty['id']}/complete/").status_code == 409
    assert think(api, empty["id"], "late").status_code == 409

    done = reasoned(api, on_commit, "Which queue for emails?", "django-q2 with the ORM broker")
    assert api.post(f"{CHAINS}{done['id']}/abandon/", {}, format="json").status_code == 409
    assert api.post(f"{CHAINS}{done['id']}/complete/").status_code == 200  # idempotent


def test_completing_a_chain_summarises_embeds_and_forms_its_memories(api, space, on_commit):
    chain = reasoned(api, on_commit, "How should checkout retry failed payments?",
                     "Retry every failed payment three times",
                     revise_last="Retry only network errors; a declined card is final")

    stored = ThinkingChain.objects.get(pk=chain["id"])
    assert stored.summary_source == "extractive"
    assert stored.summary.startswith("Question: How should checkout retry failed payments?")
    assert "Conclusion: Retry only network errors; a declined card is final." in stored.summary
    assert stored.embedding is not None
    assert stored.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    links = {link.rule: link.memory for link in FormedMemory.objects.filter(chain=stored)}
    assert (links["chain_summary"].memory_type, links["chain_summary"].kind) == ("semantic", "summary")
    revision = links["chain_revision"]
    assert revision.memory_type == "procedural"
    # docs/prd.md, "Thinking chains": the reason is the revising thought.
    assert revision.content == (
        "When reasoning about How should checkout retry failed payments?, the initial approach "
        "'Retry every failed payment three times' needed revision because: "
        "Retry only network errors; a declined card is final.")
    assert revision.metadata["thinking_chain"]["thought"] == 2
    assert revision.metadata["thinking_chain"]["revises"] == 1
    assert "revision-pattern" in revision.tags
    assert {m.space_id for m in links.values()} == {space.id}


def test_recall_reasoning_finds_similar_past_chains_by_meaning_and_by_words(api, space, on_commit):
    payments = reasoned(api, on_commit, "How should checkout retry failed payments?",
                        "Retry network errors with backoff; never retry a declined card")
    reasoned(api, on_commit, "Which font renders receipts as PDF?", "DejaVu Sans has every glyph we need")
    reasoned(api, on_commit, "Where do we keep session data?", "Redis, shared by both web nodes")

    by_meaning = api.post(f"{CHAINS}recall/", {"query": "what to do when a charge to the credit card fails",
                                               "k": 3}, format="json").json()["results"]
    by_words = api.post(f"{CHAINS}recall/", {"query": "DejaVu glyph", "k": 1},
                        format="json").json()["results"]

    assert by_meaning[0]["chain"]["id"] == payments["id"]
    assert by_meaning[0]["similarity"] > by_meaning[1]["similarity"]
    assert by_words[0]["chain"]["query"] == "Which font renders receipts as PDF?"
    assert by_words[0]["text_rank"] > 0


def test_recall_reasoning_is_audited_per_space_read_with_counts_and_no_text(api, space, on_commit, user):
    reasoned(api, on_commit, "Which font renders receipts as PDF?", "DejaVu Sans has every glyph we need")
    other = SpaceFactory(slug="chains-elsewhere", members={user: "owner"})
    before = AuditEvent.objects.filter(action="recall").count()

    found = api.post(f"{CHAINS}recall/", {"query": "DejaVu glyph receipts", "k": 3}, format="json").json()

    rows = list(AuditEvent.objects.filter(action="recall").order_by("id")[before:])
    by_space = {row.space_id: row.payload_data["after"] for row in rows}
    assert set(by_space) == {space.id, other.id}
    assert by_space[space.id] == {"items": len(found["results"]), "tracked": False,
                                  "purpose": "reasoning_recall"}
    assert by_space[other.id]["items"] == 0
    assert all(row.actor_id == user.id and row.target_type == "recall" for row in rows)
    assert "DejaVu" not in json.dumps([row.payload_data for row in rows])


def test_recall_reasoning_skips_active_chains_unless_asked_and_stays_in_visible_spaces(
        api, space, personas, on_commit):
    start_chain(api, "Should carts expire after a day?")
    assert api.post(f"{CHAINS}recall/", {"query": "cart expiry"}, format="json").json()["results"] == []
    active = api.post(f"{CHAINS}recall/", {"query": "carts expire", "include_active": True},
                      format="json").json()["results"]
    assert [r["chain"]["query"] for r in active] == ["Should carts expire after a day?"]

    reasoned(api, on_commit, "Should carts expire after a week?", "A week matches the cookie")
    stranger = personas["stranger"]
    assert stranger.post(f"{CHAINS}recall/", {"query": "carts expire"}, format="json").json()["results"] == []
    unknown = api.post(f"{CHAINS}recall/", {"query": "carts", "spaces": ["nowhere"]}, format="json")
    assert unknown.status_code == 404  # as POST /api/v1/recall/ answers
    assert unknown.json()["error"]["fields"] == {"spaces": ["No space 'nowhere'."]}
    unseen = stranger.post(f"{CHAINS}recall/", {"query": "carts", "spaces": ["webshop"]}, format="json")
    assert unseen.status_code == 404
    assert unseen.json()["error"]["fields"] == {"spaces": ["No space 'webshop'."]}
    assert stranger.get(f"{CHAINS}{active[0]['chain']['id']}/").status_code == 404


@pytest.mark.parametrize(("mode", "recalled"), [("assist", True), ("paused", True), ("incognito", True),
                                                ("capture_only", False), ("off", False)])
def test_recall_reasoning_follows_the_space_memory_mode(api, space, on_commit, mode, recalled):
    chain = reasoned(api, on_commit, "Should carts expire after a week?", "A week matches the cookie")
    assert api.patch("/api/v1/spaces/webshop/", {"mode": mode}, format="json").status_code == 200

    named = api.post(f"{CHAINS}recall/", {"query": "carts expire", "spaces": ["webshop"]}, format="json")
    anywhere = api.post(f"{CHAINS}recall/", {"query": "carts expire"}, format="json")

    for response in (named, anywhere):
        assert response.status_code == 200
        ids = [r["chain"]["id"] for r in response.json()["results"]]
        assert ids == ([chain["id"]] if recalled else [])
        assert response.json()["silenced_spaces"] == ([] if recalled else ["webshop"])


def test_recall_reasoning_follows_the_caller_own_memory_mode(api, space, on_commit):
    reasoned(api, on_commit, "Should carts expire after a week?", "A week matches the cookie")
    assert api.put("/api/v1/me/mode/", {"mode": "off"}, format="json").status_code == 200

    response = api.post(f"{CHAINS}recall/", {"query": "carts expire"}, format="json")

    assert response.json() == {"results": [], "silenced_spaces": ["webshop"]}


def test_events_and_decisions_link_to_a_chain_of_their_space_only(api, space):
    execution = started(api)
    chain = start_chain(api, execution=execution["id"])
    event = appended(api, execution["id"], "revision", "R1", thinking_chain=chain["id"])["event"]
    assert event["thinking_chain"] == chain["id"]
    assert api.get(CHAINS, {"execution": execution["id"]}).json()["count"] == 1

    SpaceFactory(slug="elsewhere", members={ThinkingChain.objects.get(pk=chain["id"]).created_by: "owner"})
    other = api.post(CHAINS, {"space": "elsewhere", "query": "Elsewhere?"}, format="json").json()
    response = api.post(f"/api/v1/prd/executions/{execution['id']}/events/",
                        {"type": "revision", "summary": "x", "thinking_chain": other["id"]}, format="json")
    assert response.status_code == 400
    assert "thinking_chain" in response.json()["error"]["fields"]
