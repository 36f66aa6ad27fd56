"""Curators merge duplicate memories and resolve conflicts that recall flags."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from governance.audit.models import AuditEvent
from memories.models import Memory, MemoryStats
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.personas import client_for


@pytest.fixture
def team(db):
    owner, curator, contributor, viewer = (UserFactory(username=f"cur-{r}") for r in
                                           ("owner", "curator", "contributor", "viewer"))
    space = SpaceFactory(slug="cur-space", members={owner: "owner", curator: "curator",
                                                    contributor: "contributor", viewer: "viewer"})
    return {"space": space, "owner": owner, "curator": curator, "contributor": contributor,
            "viewer": viewer}


def _memory(space, title: str, *, phrases: list[str], tags: list[str], **extra) -> Memory:
    return make_memory(space, title=title, content=f"{title}: what the team agreed, in a sentence or two.",
                       canonical_phrases=phrases, tags=tags, **extra)


def test_merging_keeps_one_memory_with_everything_the_duplicates_said(team):
    # given two near-duplicates and a target, with counters on each
    space = team["space"]
    target = _memory(space, "Deploy with blue green", phrases=["blue green deploy"], tags=["deploy"])
    first = _memory(space, "Blue/green deploys", phrases=["blue green deploy", "switch the router"],
                    tags=["deploy", "ops"])
    second = _memory(space, "Deploy switch-over", phrases=["drain old pool"], tags=["release"])
    MemoryStats.objects.filter(pk=first.pk).update(usage_count=3, access_count=5, confidence=0.9)
    MemoryStats.objects.filter(pk=second.pk).update(usage_count=1, access_count=2)
    api = client_for(team["curator"])

    # when the curator merges them into the target, rewriting its content
    response = api.post(f"/api/v1/memories/{target.pk}/merge/", {
        "sources": [first.pk, second.pk], "version": 1, "reason": "three notes, one practice",
        "content": "Deploys are blue/green: start the new pool, switch the router, drain the old pool.",
    }, format="json")

    # then the target is one new version holding the union, the sources are superseded and archived
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["merged"] == [first.pk, second.pk]
    merged = body["memory"]
    assert merged["version"] == 2
    assert merged["content"].startswith("Deploys are blue/green")
    assert merged["canonical_phrases"] == ["blue green deploy", "switch the router", "drain old pool"]
    assert merged["tags"] == ["deploy", "ops", "release"]
    assert merged["confidence_score"] == 0.9
    assert merged["usage_count"] == 4
    for source in (first, second):
        stored = Memory.objects.get(pk=source.pk)
        assert stored.archived
        assert stored.superseded_by_id == target.pk
        assert stored.archive_reason == f"merged into {target.pk}"
    # and the merge is audited on the target
    assert AuditEvent.objects.filter(action="merge", target_id=target.pk).count() == 1
    # and the sources leave the default list
    listed = {m["id"] for m in api.get("/api/v1/memories/?space=cur-space").json()["results"]}
    assert listed == {target.pk}


def test_what_does_not_fit_the_limits_is_reported_and_kept_in_the_sources(team):
    space = team["space"]
    target = _memory(space, "Target note", phrases=[f"target phrase {n}" for n in range(10)], tags=["alpha"])
    source = _memory(space, "Source note", phrases=[f"source phrase {n}" for n in range(5)], tags=["beta"])
    response = client_for(team["curator"]).post(
        f"/api/v1/memories/{target.pk}/merge/", {"sources": [source.pk], "version": 1}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert len(body["memory"]["canonical_phrases"]) == 12
    assert body["dropped"] == {"canonical_phrases": ["source phrase 2", "source phrase 3", "source phrase 4"]}
    assert Memory.objects.get(pk=source.pk).canonical_phrases[-1] == "source phrase 4"


def test_a_stale_version_is_a_conflict_and_nothing_changes(team):
    space = team["space"]
    target = _memory(space, "Target note", phrases=["target"], tags=[])
    source = _memory(space, "Source note", phrases=["source"], tags=[])
    response = client_for(team["curator"]).post(
        f"/api/v1/memories/{target.pk}/merge/", {"sources": [source.pk], "version": 7}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "version_conflict"
    assert not Memory.objects.get(pk=source.pk).archived


@pytest.mark.parametrize(("persona", "status"), [("contributor", 403), ("viewer", 403), ("stranger", 404)])
def test_only_curators_and_owners_merge(team, persona, status):
    space = team["space"]
    target = _memory(space, "Target note", phrases=["target"], tags=[])
    source = _memory(space, "Source note", phrases=["source"], tags=[])
    user = team.get(persona) or UserFactory(username="cur-stranger")
    response = client_for(user).post(f"/api/v1/memories/{target.pk}/merge/",
                                     {"sources": [source.pk], "version": 1}, format="json")
    assert response.status_code == status
    assert not Memory.objects.get(pk=source.pk).archived
    assert Memory.objects.get(pk=target.pk).version == 1


def test_bad_sources_are_field_errors(team):
    space = team["space"]
    elsewhere = SpaceFactory(slug="cur-elsewhere", members={team["curator"]: "curator"})
    target = _memory(space, "Target note", phrases=["target"], tags=[])
    foreign = _memory(elsewhere, "Foreign note", phrases=["foreign"], tags=[])
    api = client_for(team["curator"])

    itself = api.post(f"/api/v1/memories/{target.pk}/merge/", {"sources": [target.pk], "version": 1},
                      format="json")
    assert itself.status_code == 400
    assert "sources" in itself.json()["error"]["fields"]

    other_space = api.post(f"/api/v1/memories/{target.pk}/merge/", {"sources": [foreign.pk], "version": 1},
                           format="json")
    assert other_space.status_code == 400
    assert "sources[0]" in other_space.json()["error"]["fields"]

    missing = api.post(f"/api/v1/memories/{target.pk}/merge/", {"sources": ["mem_nope"], "version": 1},
                       format="json")
    assert missing.status_code == 404

    empty = api.post(f"/api/v1/memories/{target.pk}/merge/", {"sources": [], "version": 1}, format="json")
    assert empty.status_code == 400


def test_merging_in_a_paused_space_is_refused(team):
    space = team["space"]
    target = _memory(space, "Target note", phrases=["target"], tags=[])
    source = _memory(space, "Source note", phrases=["source"], tags=[])
    space.mode = "paused"
    space.save(update_fields=["mode"])
    response = client_for(team["curator"]).post(f"/api/v1/memories/{target.pk}/merge/",
                                                {"sources": [source.pk], "version": 1}, format="json")
    assert response.status_code == 409
    assert not Memory.objects.get(pk=source.pk).archived


def test_resolving_a_conflict_supersedes_the_memory_not_kept(team, on_commit):
    # given two memories recall flags as conflicting (shared tag, opposite stances)
    space = team["space"]
    with on_commit():  # embedded, as they would be
        use = _memory(space, "Use MudDialog", phrases=["use muddialog"], tags=["ui"])
        avoid = _memory(space, "Avoid MudDialog", phrases=["avoid muddialog"], tags=["ui"])
    api = client_for(team["curator"])
    question = {"query": "muddialog for dialogs", "spaces": ["cur-space"], "k": 5}
    recalled = api.post("/api/v1/recall/", question, format="json").json()
    conflicts = {i["id"]: i["conflict"] for i in recalled["data"]["ranked_memory_list"] if i["conflict"]}
    assert conflicts[use.pk]["with"] == avoid.pk

    # when the curator keeps "use" (the other one, from avoid's point of view)
    with on_commit():  # the commit tells the recall cache that the space changed
        response = api.post(f"/api/v1/memories/{avoid.pk}/resolve-conflict/",
                            {"other": use.pk, "keep": "other", "reason": "we moved to MudDialog"},
                            format="json")

    # then "avoid" is superseded by "use" and archived, and recall no longer flags a conflict
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["kept"]["id"] == use.pk
    assert body["superseded"]["id"] == avoid.pk
    stored = Memory.objects.get(pk=avoid.pk)
    assert stored.archived
    assert stored.superseded_by_id == use.pk
    again = api.post("/api/v1/recall/", question, format="json").json()
    assert [i["id"] for i in again["data"]["ranked_memory_list"]] == [use.pk]
    assert again["data"]["ranked_memory_list"][0]["conflict"] is None


def test_resolving_a_conflict_needs_curation_rights_and_a_valid_choice(team):
    space = team["space"]
    a = _memory(space, "Use tabs", phrases=["use tabs"], tags=["style"])
    b = _memory(space, "Avoid tabs", phrases=["avoid tabs"], tags=["style"])
    viewer = client_for(team["viewer"]).post(f"/api/v1/memories/{a.pk}/resolve-conflict/",
                                             {"other": b.pk, "keep": "this"}, format="json")
    assert viewer.status_code == 403
    bad = client_for(team["curator"]).post(f"/api/v1/memories/{a.pk}/resolve-conflict/",
                                           {"other": b.pk, "keep": "both"}, format="json")
    assert bad.status_code == 400
    assert "keep" in bad.json()["error"]["fields"]
    assert not Memory.objects.filter(pk__in=[a.pk, b.pk], archived=True).exists()


def test_the_admin_merges_selected_memories_into_the_one_the_curator_keeps(client, team):
    # given a staff curator and three memories selected in the changelist
    curator = team["curator"]
    curator.is_staff = True
    curator.save(update_fields=["is_staff"])
    curator.user_permissions.add(*Permission.objects.filter(codename__in=["view_memory", "change_memory"]))
    client.force_login(curator)
    space = team["space"]
    keep = _memory(space, "Keep this note", phrases=["keep phrase"], tags=["alpha"])
    others = [_memory(space, f"Duplicate note {n}", phrases=[f"dup phrase {n}"], tags=["beta"])
              for n in (1, 2)]
    url = reverse("admin:memories_memory_changelist")
    selected = [keep.pk, *(m.pk for m in others)]

    # when the action is chosen, the admin asks which one to keep
    page = client.post(url, {"action": "merge_selected", "_selected_action": selected})
    assert page.status_code == 200
    assert b"Choose the memory to keep" in page.content

    # and when the curator picks one and confirms
    done = client.post(url, {"action": "merge_selected", "_selected_action": selected, "apply": "1",
                             "target": keep.pk, "reason": "duplicates"}, follow=True)

    # then the others are merged into it
    assert done.status_code == 200
    kept = Memory.objects.get(pk=keep.pk)
    assert kept.version == 2
    assert kept.canonical_phrases[0] == "keep phrase"
    assert set(kept.canonical_phrases) == {"keep phrase", "dup phrase 1", "dup phrase 2"}
    assert all(Memory.objects.get(pk=m.pk).superseded_by_id == keep.pk for m in others)
