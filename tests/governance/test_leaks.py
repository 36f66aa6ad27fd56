"""Around the gateway: history, timelines and the admin never name what the reader may not see."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from memories import services as memory_services
from prd import services as prd_services
from retrieval.models import RecallEvent
from tests.governance.conftest import World
from tests.personas import client_for


@pytest.fixture
def superseded(world: World) -> World:
    """`open` is superseded by `owner_only`, which only the owner sees."""
    memory_services.memory_update(actor=SYSTEM, memory_id=world.id("open"),
                                  expected_version=world.memories["open"].version,
                                  changes={"superseded_by": world.id("owner_only")})
    return world


def test_version_history_does_not_name_a_hidden_successor(superseded):
    """Given a memory whose newest version names a successor only owners see, when a viewer
    reads its versions, then neither the snapshot nor the diff names it; the owner's do."""
    world = superseded
    hidden = world.id("owner_only")
    viewer = client_for(world.users["viewer"])
    owner = client_for(world.users["owner"])
    listing = f"/api/v1/memories/{world.id('open')}/versions/"

    listed = viewer.get(listing)
    newest = viewer.get(f"{listing}3/")
    owners = owner.get(f"{listing}3/")

    assert listed.status_code == newest.status_code == 200
    assert hidden not in listed.content.decode()
    assert hidden not in newest.content.decode()
    assert newest.json()["snapshot"]["superseded_by"] is None
    assert next(c for c in newest.json()["changes"] if c["path"] == "superseded_by")["after"] is None
    assert owners.json()["snapshot"]["superseded_by"] == hidden


def test_audit_timelines_do_not_name_a_hidden_successor(superseded):
    """Given the same edit in the audit log, when an auditor reads the memory's and the
    space's timelines, then no payload names the hidden successor."""
    world = superseded
    auditor = client_for(world.users["auditor"])

    memory_timeline = auditor.get(f"/api/v1/memories/{world.id('open')}/timeline/")
    space_timeline = auditor.get(f"/api/v1/spaces/{world.space.slug}/timeline/?page_size=500")

    assert memory_timeline.status_code == space_timeline.status_code == 200
    assert world.id("owner_only") not in memory_timeline.content.decode()
    assert world.id("owner_only") not in space_timeline.content.decode()
    edits = [i for i in memory_timeline.json()["results"] if i["action"] == "edit"]
    assert any(c["path"] == "superseded_by" and c["after"] is None for i in edits for c in i["changes"])


def test_a_recall_in_a_timeline_lists_only_the_spaces_the_reader_sees(world):
    """Given a recall across the space and one only the owner reads, when the auditor reads
    the space timeline, then the recall lists only the space it may read."""
    RecallEvent.objects.create(actor=world.users["owner"], spaces=["gov-other", "gov-space"],
                               query_text="release checklist", profile="sam",
                               memory_ids=[world.id("open"), world.id("elsewhere")],
                               items=[{"id": world.id("open"), "score": 0.9}])
    auditor = client_for(world.users["auditor"])
    owner = client_for(world.users["owner"])
    url = f"/api/v1/spaces/{world.space.slug}/timeline/?action=recall"

    seen_by_auditor = auditor.get(url).json()["results"]
    seen_by_owner = owner.get(url).json()["results"]

    assert [i["recall"]["spaces"] for i in seen_by_auditor] == [["gov-space"]]
    assert [i["recall"]["spaces"] for i in seen_by_owner] == [["gov-other", "gov-space"]]


# --- the admin ---------------------------------------------------------------------------

def staff_client(user, *codenames: str) -> Client:
    """`user` as a staff member holding the admin's model permissions (not a superuser)."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_admin_space_filters_offer_only_spaces_the_reader_sees(world):
    """Given a staff auditor of one space and executions and chains in another, when it
    opens the memory, execution and chain lists, then the space filters never name the
    space it cannot see."""
    prd_services.execution_start(actor=SYSTEM, space="gov-other", prd_ref="docs/prd/hidden.md")
    prd_services.chain_start(actor=SYSTEM, space="gov-other", query="How to hide a chain?")
    prd_services.execution_start(actor=SYSTEM, space="gov-space", prd_ref="docs/prd/seen.md")
    client = staff_client(world.users["auditor"], "view_memory", "view_prdexecution", "view_thinkingchain")

    owner = staff_client(world.users["owner"], "view_memory", "view_prdexecution", "view_thinkingchain")
    names = ("memories_memory", "prd_prdexecution", "prd_thinkingchain")

    pages = {name: client.get(reverse(f"admin:{name}_changelist")) for name in names}
    owners = {name: owner.get(reverse(f"admin:{name}_changelist")) for name in names}

    for name in names:
        assert pages[name].status_code == owners[name].status_code == 200, name
        assert "gov-other" not in pages[name].text, name
        # The owner reads both spaces, so its filter offers both.
        assert f"space__id__exact={world.other.pk}" in owners[name].text, name


def test_the_audit_admin_lists_only_events_of_spaces_the_reader_may_audit(world):
    """Given events in the space, in the owner's other space and without a space, when a
    staff auditor of the space opens the audit log, then it lists only the space's events
    (less those about memories hidden from it), and a viewer lists none."""
    auditor = staff_client(world.users["auditor"], "view_auditevent")
    viewer = staff_client(world.users["viewer"], "view_auditevent")
    url = reverse("admin:audit_auditevent_changelist")

    listed = auditor.get(url, {"all": ""})
    nothing = viewer.get(url)

    assert listed.status_code == 200
    ids = {int(pk) for pk in listed.context["cl"].result_list.values_list("pk", flat=True)}
    in_space = set(AuditEvent.objects.filter(space_id=world.space.pk)
                   .exclude(target_type="memory", target_id__in=[world.id(n) for n in
                                                                 ("hr", "contrib_only", "owner_only",
                                                                  "granted")])
                   .values_list("pk", flat=True))
    assert ids == in_space
    assert "gov-other" not in listed.text
    assert list(nothing.context["cl"].result_list) == []


def test_the_audit_admin_hides_what_a_deleted_memory_said_from_all_but_owners(world):
    """Given a memory edited and then deleted, when an auditor and the owner open the edit
    event in the admin, then only the owner reads its payload."""
    memory_services.memory_delete(actor=SYSTEM, memory_id=world.id("contributors"))
    event = AuditEvent.objects.filter(target_id=world.id("contributors"), action="edit").first()
    url = reverse("admin:audit_auditevent_change", args=[event.pk])

    as_auditor = staff_client(world.users["auditor"], "view_auditevent").get(url)
    as_owner = staff_client(world.users["owner"], "view_auditevent").get(url)

    assert as_auditor.status_code == as_owner.status_code == 200
    assert "&quot;changes&quot;" not in as_auditor.text
    assert "only the space&#x27;s owners" in as_auditor.text
    assert "&quot;changes&quot;" in as_owner.text
    assert "only the space&#x27;s owners" not in as_owner.text
