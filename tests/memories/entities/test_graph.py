"""The relationship graph: curators link memories, anyone who may read walks the links
(only through what they may see), and recall brings in what is linked to its best hits."""

import pytest
from django.core.cache import cache

from governance.audit.models import AuditEvent
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory
from tests.personas import member_client

GRAPH = "/api/v1/memories/{}/graph/"
RELATIONS = "/api/v1/memories/{}/relations/"


@pytest.fixture
def chain(space, on_commit):
    """A bug, the fix that solves it, and the incident the bug caused."""
    cache.clear()
    with on_commit():
        bug = make_memory(space, title="Checkout times out under load",
                          content="The checkout endpoint times out when the connection pool is exhausted.")
        fix = make_memory(space, title="Raise the pool and add PgBouncer", kind="solution",
                          content="Put PgBouncer in transaction mode in front of Postgres and raise max "
                                  "connections to 200.")
        incident = make_memory(space, title="Black Friday incident",
                               content="Orders were lost for twenty minutes on the busiest day of the year.")
    lexeme_stats_refresh()
    return bug, fix, incident


def link(api, source, target, relation_type, **extra):
    body = {"target": target.id, "relation_type": relation_type, **extra}
    return api.post(RELATIONS.format(source.id), body, format="json")


def test_a_curator_links_memories_and_the_graph_reads_both_ways(api, chain):
    bug, fix, incident = chain

    created = link(api, fix, bug, "SOLVES", strength=0.9)
    again = link(api, fix, bug, "SOLVES", strength=0.8)
    link(api, bug, incident, "LEADS_TO")
    around_bug = api.get(GRAPH.format(bug.id)).json()
    two_hops = api.get(GRAPH.format(fix.id), {"depth": 2}).json()
    solved_only = api.get(GRAPH.format(bug.id), {"types": "SOLVES"}).json()

    assert (created.status_code, again.status_code) == (201, 200)
    assert again.json()["strength"] == 0.8
    assert {(n["id"], n["depth"]) for n in around_bug["nodes"]} == {(bug.id, 0), (fix.id, 1),
                                                                      (incident.id, 1)}
    solves = next(e for e in around_bug["edges"] if e["relation_type"] == "SOLVES")
    assert (solves["source"], solves["target"], solves["inverse"]) == (fix.id, bug.id, "SOLVED_BY")
    assert {(n["id"], n["depth"]) for n in two_hops["nodes"]} == {(fix.id, 0), (bug.id, 1), (incident.id, 2)}
    assert {n["id"] for n in solved_only["nodes"]} == {bug.id, fix.id}
    assert AuditEvent.objects.filter(action="edit", target_id=fix.id).exists()


def test_bad_links_get_field_errors(api, chain, space, on_commit):
    bug, fix, _ = chain
    from tests.factories import SpaceFactory

    with on_commit():
        elsewhere = make_memory(SpaceFactory(slug="elsewhere", members={}), title="Other space note")

    assert link(api, fix, bug, "FIXES").status_code == 400
    assert link(api, fix, fix, "SOLVES").status_code == 400
    assert link(api, fix, bug, "SOLVES", strength=1.5).status_code == 400
    # A memory the caller may not see is as absent as one that does not exist.
    assert link(api, fix, elsewhere, "SOLVES").status_code == 404
    assert api.post(RELATIONS.format(fix.id), {"target": "mem_nope", "relation_type": "SOLVES"},
                    format="json").status_code == 404
    assert api.get(GRAPH.format(bug.id), {"types": ["SOLVES", "NOPE"]}).status_code == 400
    assert api.get(GRAPH.format(bug.id), {"depth": 9}).status_code == 400


def test_only_curators_link_and_readers_see_only_what_they_may(space, chain, api):
    bug, fix, incident = chain
    contributor = member_client(space, "contributor", "graph-contributor")
    viewer = member_client(space, "viewer", "graph-viewer")
    link(api, fix, bug, "SOLVES")
    link(api, bug, incident, "LEADS_TO")
    api.post(f"/api/v1/memories/{incident.id}/restrict/", {"restricted_to": "curator"}, format="json")

    refused = contributor.post(RELATIONS.format(bug.id), {"target": fix.id, "relation_type": "RELATES_TO"},
                               format="json")
    seen = viewer.get(GRAPH.format(bug.id)).json()

    assert refused.status_code == 403
    assert {n["id"] for n in seen["nodes"]} == {bug.id, fix.id}
    assert all(incident.id not in (e["source"], e["target"]) for e in seen["edges"])
    assert viewer.get(GRAPH.format(incident.id)).status_code == 404


def test_a_curator_removes_an_edge(api, chain):
    bug, fix, _ = chain
    edge = link(api, fix, bug, "SOLVES").json()

    assert api.delete(f"/api/v1/relations/{edge['id']}/").status_code == 204
    assert api.delete(f"/api/v1/relations/{edge['id']}/").status_code == 404
    assert api.get(GRAPH.format(bug.id)).json()["edges"] == []
    # An edge whose end was archived can still be removed.
    archived = link(api, fix, bug, "SOLVES").json()
    api.post(f"/api/v1/memories/{bug.id}/archive/", {"reason": "fixed for good"}, format="json")
    assert api.delete(f"/api/v1/relations/{archived['id']}/").status_code == 204


def test_recall_brings_in_what_is_linked_to_its_best_hit_and_says_why(api, chain):
    bug, fix, _ = chain
    query = {"query": "why does checkout time out when the pool is exhausted?", "track": False, "k": 5,
             "as_of": "2026-11-22T12:00:00Z"}
    before = api.post("/api/v1/recall/", query, format="json").json()["data"]["ranked_memory_list"]
    link(api, fix, bug, "SOLVES", strength=0.9)
    cache.clear()

    after = api.post("/api/v1/recall/", query, format="json").json()["data"]["ranked_memory_list"]

    assert before[0]["id"] == after[0]["id"] == bug.id
    linked = next(item for item in after if item["id"] == fix.id)
    assert linked["signals"]["graph"] == pytest.approx(0.9)
    assert "linked to “Checkout times out under load” by SOLVED_BY" in linked["rationale"]
    was = next((item for item in before if item["id"] == fix.id), None)
    assert was is None or was["signals"]["graph"] == 0
