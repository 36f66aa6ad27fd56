"""Curation in the admin: filters, version history with restore, archive actions, edits."""

import pytest
from django.contrib.admin.utils import quote
from django.urls import reverse

from memories.models import Memory
from tests.factories import UserFactory, make_memory


@pytest.fixture
def admin_client(client, db):
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


def test_changelist_filters_by_every_listed_facet(admin_client, space):
    make_memory(space, tags=["ui"], reliability="confirmed")
    make_memory(space, title="Other memory", tags=["db"])
    url = reverse("admin:memories_memory_changelist")
    for query in (f"space__id__exact={space.id}", "memory_type__exact=semantic", "kind__exact=fact",
                  "reliability__exact=confirmed", "archived__exact=0", "embedding_status__exact=pending",
                  "tag=ui", "q=pytest"):
        response = admin_client.get(f"{url}?{query}")
        assert response.status_code == 200, query
    assert admin_client.get(f"{url}?tag=ui").context["cl"].result_count == 1
    assert admin_client.get(f"{url}?reliability__exact=confirmed").context["cl"].result_count == 1


def test_change_page_shows_history_and_restores_a_version(admin_client, space):
    from governance.access import SYSTEM
    from memories import services

    memory = make_memory(space)
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"title": "Edited title"}, reason="clearer")
    # The changelist links to the admin-quoted id ("_" -> "_5F"); use the same URL.
    page = admin_client.get(reverse("admin:memories_memory_change", args=[quote(memory.id)]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Version history" in html
    assert "Restore this version" in html
    assert "clearer" in html

    restore = reverse("admin:memories_memory_restore_version", args=[quote(memory.id), 1])
    assert admin_client.get(restore).status_code == 405
    response = admin_client.post(restore)

    assert response.status_code == 302
    memory.refresh_from_db()
    assert (memory.version, memory.title) == (3, "Prefer pytest fixtures")


def test_archive_and_restore_actions_use_the_services(admin_client, space):
    memory = make_memory(space)
    url = reverse("admin:memories_memory_changelist")
    admin_client.post(url, {"action": "archive_selected", "_selected_action": [memory.id]})
    assert Memory.objects.get(pk=memory.id).archived is True
    admin_client.post(url, {"action": "restore_selected", "_selected_action": [memory.id]})
    assert Memory.objects.get(pk=memory.id).archived is False


def _form_data(memory: Memory, **overrides) -> dict:
    data = {
        "space": memory.space_id, "title": memory.title, "content": memory.content,
        "summary": memory.summary, "canonical_phrases": ",".join(memory.canonical_phrases),
        "tags": ",".join(memory.tags), "memory_type": memory.memory_type, "kind": memory.kind,
        "priority": memory.priority, "reliability": memory.reliability, "importance": memory.importance,
        "source_type": memory.source_type, "source_ref": memory.source_ref, "source_uri": "",
        "context_window": '{"applies_to": [], "excludes": []}',
        "decay_policy": '{"type": "exponential", "half_life_days": 90, "min_confidence": 0.4}',
        "metadata": "{}", "training_examples": "[]", "confidence_score": "0.8",
        "base_version": memory.version, "reason": "",
        "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0",
        "relations_out-TOTAL_FORMS": "0", "relations_out-INITIAL_FORMS": "0",
    }
    data.update(overrides)
    return data


def test_an_admin_edit_makes_a_new_version(admin_client, space):
    memory = make_memory(space)
    url = reverse("admin:memories_memory_change", args=[memory.id])
    response = admin_client.post(url, _form_data(memory, title="Edited in admin", reason="typo"))
    assert response.status_code == 302, response.context["adminform"].form.errors
    memory.refresh_from_db()
    assert (memory.version, memory.title) == (2, "Edited in admin")
    assert memory.versions.get(version=2).reason == "typo"


def test_an_admin_edit_on_a_stale_page_is_refused(admin_client, space):
    from governance.access import SYSTEM
    from memories import services

    memory = make_memory(space)
    stale = _form_data(memory, title="My edit")
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"title": "Their edit"})
    response = admin_client.post(reverse("admin:memories_memory_change", args=[memory.id]), stale)
    assert response.status_code == 200
    assert "Someone changed this memory" in response.content.decode()
    assert Memory.objects.get(pk=memory.id).title == "Their edit"


def test_an_admin_add_goes_through_the_create_service(admin_client, space):
    data = _form_data(
        Memory(space=space, title="Added in admin", content="Content written in the admin form.",
               summary="", canonical_phrases=[], tags=[], source_type="user", source_ref="admin"),
        space=space.id, base_version="",
    )
    response = admin_client.post(reverse("admin:memories_memory_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    created = Memory.objects.get(space=space)
    assert created.title == "Added in admin"
    assert created.canonical_phrases[0] == "added in admin"
    assert created.versions.count() == 1


@pytest.fixture
def curator_client(client, db):
    """A staff curator of `team` only, with the model permissions the demo curator has."""
    from django.contrib.auth.models import Permission

    from governance.access import SYSTEM
    from governance.services import membership_grant
    from tests.factories import SpaceFactory

    curator = UserFactory(username="curator", is_staff=True)
    curator.user_permissions.add(*Permission.objects.filter(content_type__app_label="memories"))
    team = SpaceFactory(slug="team")
    membership_grant(actor=SYSTEM, space=team, user=curator, role="curator")
    client.force_login(curator)
    client.team = team
    return client


def test_a_curator_sees_what_sam_knows_about_a_person_and_exports_it(curator_client):
    import json

    from governance.access import SYSTEM
    from governance.audit.models import AuditEvent
    from governance.services import membership_grant
    from memories import services
    from tests.factories import SpaceFactory

    team, hidden = curator_client.team, SpaceFactory(slug="hidden")
    ann, bob = UserFactory(username="ann"), UserFactory(username="bob")
    for space in (team, hidden):
        for user in (ann, bob):
            membership_grant(actor=SYSTEM, space=space, user=user, role="contributor")
    ann_wrote = [services.memory_create(actor=ann, data={"space": space.slug, "kind": kind, "title": title,
                                                         "content": f"{title} as Ann said it."}).instance
                 for space, kind, title in ((team, "preference", "Ann prefers tabs"),
                                            (team, "decision", "Ann chose Postgres"),
                                            (hidden, "preference", "Ann's hidden note"))]
    services.memory_create(actor=bob, data={"space": team.slug, "title": "Bob's note",
                                            "content": "Bob likes spaces."})
    url = reverse("admin:memories_memory_changelist")

    about_ann = curator_client.get(f"{url}?about={ann.pk}")
    preferences = curator_client.get(f"{url}?about={ann.pk}&category=preference")
    # Only people whose memories the curator may read are offered, by name.
    offered = dict(next(f for f in about_ann.context["cl"].filter_specs if f.parameter_name == "about")
                   .lookup_choices)

    assert sorted(m.title for m in about_ann.context["cl"].result_list) == ["Ann chose Postgres",
                                                                            "Ann prefers tabs"]
    assert [m.title for m in preferences.context["cl"].result_list] == ["Ann prefers tabs"]
    assert set(offered.values()) == {"ann", "bob"}

    exported = curator_client.post(f"{url}?about={ann.pk}", {
        "action": "export_selected", "select_across": "1", "index": "0",
        "_selected_action": [ann_wrote[0].pk]})
    rows = [json.loads(line) for line in b"".join(exported.streaming_content).decode().splitlines()]

    assert exported["Content-Type"] == "application/x-ndjson"
    assert sorted(row["id"] for row in rows) == sorted(m.pk for m in ann_wrote[:2])
    assert {row["content"] for row in rows} == {"Ann prefers tabs as Ann said it.",
                                                "Ann chose Postgres as Ann said it."}
    event = AuditEvent.objects.filter(action="export", space_id=team.pk).latest("id")
    assert (event.actor_label, event.payload_data["after"]["memories"]) == ("curator", 2)
    assert event.payload_data["after"]["selection"] is True


def test_a_curator_reads_chat_import_reports_of_their_spaces_only(curator_client):
    from memories.models import ChatImport
    from tests.factories import SpaceFactory

    mine = ChatImport.objects.create(space=curator_client.team, source="chatgpt", file_name="export.zip",
                                     status="done", report={"conversations_seen": 12, "memories_created": 5,
                                                            "rejected": [{"rule": "name"}], "errors": []})
    other = ChatImport.objects.create(space=SpaceFactory(slug="elsewhere"), source="cursor",
                                      file_name="state.vscdb")
    url = reverse("admin:memories_chatimport_changelist")

    listed = curator_client.get(url)
    detail = curator_client.get(reverse("admin:memories_chatimport_change", args=[mine.pk]))

    assert [i.pk for i in listed.context["cl"].result_list] == [mine.pk]
    assert detail.status_code == 200
    assert "&quot;memories_created&quot;: 5" in detail.content.decode()
    assert curator_client.get(reverse("admin:memories_chatimport_change", args=[other.pk])).status_code == 302
    assert curator_client.get(reverse("admin:memories_chatimport_add")).status_code == 403


def test_a_curator_links_memories_in_the_admin_through_the_graph(admin_client, space):
    from governance.audit.models import AuditEvent
    from memories.models import MemoryRelation

    bug = make_memory(space, title="Checkout times out", content="Checkout times out under load.")
    fix = make_memory(space, title="Raise the pool", content="Raise the pool size to 50.")
    url = reverse("admin:memories_memory_change", args=[fix.id])
    link = {"relations_out-TOTAL_FORMS": "1", "relations_out-INITIAL_FORMS": "0",
            "relations_out-0-relation_type": "SOLVES", "relations_out-0-target": bug.id,
            "relations_out-0-strength": "0.8"}

    response = admin_client.post(url, {**_form_data(fix), **link})

    assert response.status_code == 302, response.context["adminform"].form.errors
    edge = MemoryRelation.objects.get(source=fix)
    assert (edge.target_id, edge.relation_type, edge.strength, edge.provenance) == (
        bug.id, "SOLVES", 0.8, {"by": "curator"})
    assert AuditEvent.objects.filter(action="edit", target_id=fix.id).exists()
    assert "SOLVES" in admin_client.get(url).content.decode()

    fix.refresh_from_db()
    remove = {"relations_out-TOTAL_FORMS": "1", "relations_out-INITIAL_FORMS": "1",
              "relations_out-0-id": edge.pk, "relations_out-0-source": fix.id,
              "relations_out-0-relation_type": "SOLVES", "relations_out-0-target": bug.id,
              "relations_out-0-strength": "0.8", "relations_out-0-DELETE": "on"}
    response = admin_client.post(url, {**_form_data(fix), **remove})
    assert response.status_code == 302
    assert not MemoryRelation.objects.filter(source=fix).exists()


def test_curators_correct_and_merge_entities_in_the_admin(curator_client, db, on_commit):
    from memories.models import Entity, MemoryEntity

    team = curator_client.team
    with on_commit():
        make_memory(team, title="Nia's parrot", content="My sister Nia adopted a parrot called Pico.")
        make_memory(team, title="Nia's flat", content="My sister Nia moved to a flat in Braga.")
        make_memory(team, title="Nini's exams", content="My sister Nini passes her exams in May; Pico sings.")
    url = reverse("admin:memories_entity_changelist")

    listing = curator_client.get(url)
    by_name = {e.name: e for e in Entity.objects.filter(space=team)}
    pico = by_name["Pico"]
    change = curator_client.post(reverse("admin:memories_entity_change", args=[pico.pk]),
                                 {"kind": "person", "name": "Pico"})
    merge = curator_client.post(url, {"action": "merge_selected",
                                      "_selected_action": [by_name["Nia"].pk, by_name["Nini"].pk]})

    assert listing.status_code == 200
    assert "Nia" in listing.content.decode()
    assert change.status_code == 302
    assert Entity.objects.get(pk=pico.pk).kind == "person"
    assert merge.status_code == 302
    # Nia, named twice, is kept; Nini, named once, is merged into her.
    kept = Entity.objects.get(space=team, pk__in=[by_name["Nia"].pk, by_name["Nini"].pk])
    assert kept.pk == by_name["Nia"].pk
    assert MemoryEntity.objects.filter(entity=kept).count() == 3
    assert kept.aliases == ["Nini"]
    page = curator_client.get(reverse("admin:memories_entity_change", args=[kept.pk]))
    assert "Nini&#x27;s exams" in page.content.decode() or "Nini's exams" in page.content.decode()
