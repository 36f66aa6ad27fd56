"""Destroying a space's data key shreds its audit payloads; the events and the chain stay."""

from __future__ import annotations

import pytest
from django.urls import reverse

from governance.access import SYSTEM
from governance.audit.services import audit_record
from governance.audit.verify import audit_chain_verify
from governance.crypto import rotation
from governance.crypto.errors import KeyDestroyed
from governance.models import DataKey
from tests.factories import SpaceFactory, make_memory


@pytest.fixture
def shredded(user):
    """A space whose memory was edited, then whose data key was destroyed."""
    space = SpaceFactory(slug="dana", members={user: "owner"})
    memory = make_memory(space, title="Dana's allergy")
    edit = audit_record("edit", actor=user, target=memory, before={"title": "Allergy"},
                        after={"title": "Dana's allergy"})
    for key_id in DataKey.objects.filter(space=space).values_list("pk", flat=True):
        rotation.destroy_key(key_id, reason="test")
    return space, memory, edit


def test_the_chain_still_verifies_after_a_key_is_destroyed(shredded):
    _, _, edit = shredded
    with pytest.raises(KeyDestroyed):
        edit.payload_data  # noqa: B018 - opening it is the test
    report = audit_chain_verify()
    assert report.intact, report.broken
    assert report.events >= 1


def test_a_shredded_event_stays_on_the_timeline_without_its_payload(api, shredded):
    space, _, edit = shredded
    audit_record("grant", actor=SYSTEM, space=space, target_type="user", target_id="1",
                 after={"role": "viewer"})  # sealed under the space's new key: still readable

    items = api.get("/api/v1/spaces/dana/timeline/?page_size=500").json()["results"]

    shredded_edit = next(i for i in items if i["event_id"] == edit.pk)
    assert shredded_edit["payload_shredded"] is True
    assert shredded_edit["action"] == "edit"
    assert (shredded_edit["before"], shredded_edit["changes"]) == (None, None)
    newest = items[0]
    assert (newest["action"], newest["payload_shredded"]) == ("grant", False)
    assert newest["after"] == {"role": "viewer"}


def test_the_admin_shows_a_shredded_payload_as_unreadable(admin_client, shredded):
    _, _, edit = shredded
    page = admin_client.get(reverse("admin:audit_auditevent_change", args=[edit.pk]))
    assert page.status_code == 200
    assert "unreadable: its data key was destroyed" in page.text
