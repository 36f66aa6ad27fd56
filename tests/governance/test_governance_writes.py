"""Governance writes: modes, redaction on edit, what str() shows, audit of every change,
and per-memory grants that go with their memory."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.urls import reverse
from guardian.models import UserObjectPermission
from guardian.shortcuts import assign_perm

from core.models import Space
from governance import retention
from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.crypto.fields import SealedJSONField, SealedTextField
from governance.models import DataKey, RestrictedTag
from governance.services import membership_grant, restricted_tag_set
from memories import services as memory_services
from memories.models import Memory, MemoryUserGrant
from memories.restrictions import memory_grant_view, memory_restrict
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.personas import client_for

# --- memory_restrict honours memory modes -------------------------------------------------


def _set_mode(space: Space, mode: str) -> None:
    space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"mode": mode})
    cache.clear()


@pytest.mark.parametrize("mode", ["paused", "off"])
def test_restricting_a_memory_in_a_paused_or_off_space_is_refused(api, space, mode):
    """Given a paused or off space, when its owner restricts a memory, then 409 and nothing changes."""
    memory = make_memory(space)
    _set_mode(space, mode)

    response = api.post(f"/api/v1/memories/{memory.pk}/restrict/", {"restricted_to": "owner"}, format="json")

    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "mode_refuses_writes"
    assert Memory.objects.get(pk=memory.pk).visibility_rank == memory.visibility_rank
    assert not AuditEvent.objects.filter(action="restrict").exists()


def test_restricting_a_memory_in_incognito_keeps_nothing(api, space):
    """Given an incognito space, when its owner restricts a memory, then it is answered and
    nothing is kept (like every other write there)."""
    memory = make_memory(space)
    _set_mode(space, "incognito")

    response = api.post(f"/api/v1/memories/{memory.pk}/restrict/", {"restricted_to": "owner"}, format="json")

    assert response.status_code == 200, response.content
    assert Memory.objects.get(pk=memory.pk).visibility_rank == memory.visibility_rank
    assert not AuditEvent.objects.filter(action="restrict").exists()


# --- public figures on edit ---------------------------------------------------------------

def test_an_edit_that_does_not_resend_metadata_keeps_its_public_figures(api, space):
    """Given a memory whose metadata names a public figure, when its content is edited
    without resending the metadata, then the figure's name survives redaction."""
    memory = make_memory(space, metadata={"public_figures": ["Lena Marquardt"]},
                         content="The compilers talk by Lena Marquardt is linked from the wiki.")

    response = api.patch(f"/api/v1/memories/{memory.pk}/", {
        "version": memory.version,
        "content": "The talk by Lena Marquardt is on the wiki; ask Peter Novak to update the link.",
    }, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["memory"]["content"] == (
        "The talk by Lena Marquardt is on the wiki; ask [name] to update the link.")


def test_an_edit_that_drops_the_public_figures_redacts_the_name(api, space):
    """Given the same memory, when the edit replaces the metadata without the figure, then
    the name is redacted like any private one."""
    memory = make_memory(space, metadata={"public_figures": ["Lena Marquardt"]},
                         content="The compilers talk by Lena Marquardt is linked from the wiki.")

    response = api.patch(f"/api/v1/memories/{memory.pk}/", {
        "version": memory.version, "metadata": {},
        "content": "The talk by Lena Marquardt is on the wiki; ask Peter Novak to update the link.",
    }, format="json")

    assert response.json()["memory"]["content"] == (
        "The talk by [name] is on the wiki; ask [name] to update the link.")


# --- str() never shows sealed text --------------------------------------------------------

MARK = "Sealed-Marker-7f3a"


def sealed_models():
    for model in django_apps.get_models():
        sealed = [f for f in model._meta.concrete_fields if isinstance(f, (SealedTextField, SealedJSONField))]
        if sealed and model._meta.label != "audit.AuditEvent":
            yield model, sealed


@pytest.mark.parametrize(("model", "fields"), list(sealed_models()),
                         ids=lambda v: v._meta.label if hasattr(v, "_meta") else "")
def test_str_of_a_model_with_sealed_text_shows_none_of_it(model, fields):
    """Given any model with sealed columns, with a marker in each, when Django renders it as
    text (the admin log, messages), then the marker is not there."""
    obj = model()
    for field in fields:
        setattr(obj, field.attname, MARK if isinstance(field, SealedTextField) else {"x": MARK})
    assert MARK not in str(obj)


def test_the_admin_log_of_a_memory_edit_does_not_hold_its_title(space, client):
    """Given a memory, when a superuser edits it in the admin, then django_admin_log's
    object_repr (plaintext) names the memory without its title."""
    memory = make_memory(space, title="Confidential merger codename")
    client.force_login(UserFactory(username="log-boss", is_staff=True, is_superuser=True))
    url = reverse("admin:memories_memory_change", args=[memory.pk])
    form = client.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update({"title": "Confidential merger codename two", "content": memory.content,
                 "canonical_phrases": ",".join(memory.canonical_phrases), "tags": ",".join(memory.tags),
                 "confidence_score": "0.75", "base_version": memory.version, "metadata": "{}",
                 "source_type": memory.source_type, "source_ref": memory.source_ref,
                 "context_window": '{"applies_to": [], "excludes": []}',
                 "decay_policy": '{"type": "exponential", "half_life_days": 90, "min_confidence": 0.4}',
                 "training_examples": "[]", "superseded_by": "", "occurred_at_0": "", "occurred_at_1": "",
                 "source_uri": "", "relations_out-TOTAL_FORMS": "0", "relations_out-INITIAL_FORMS": "0"})
    data.pop("space", None)

    response = client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    entry = LogEntry.objects.get(object_id=memory.pk)
    assert "Confidential" not in entry.object_repr
    assert memory.pk in entry.object_repr


# --- audit of every change ----------------------------------------------------------------

def test_setting_a_restricted_tag_is_audited_only_when_it_changes(space):
    """Given a restricted tag, when it is set again unchanged and then changed, then one
    audit row for the change, with the role before."""
    restricted_tag_set(actor=SYSTEM, space=space, tag="salary", min_role="curator")
    first = AuditEvent.objects.filter(action="grant", target_type="restrictedtag").count()

    restricted_tag_set(actor=SYSTEM, space=space, tag="Salary ", min_role="curator")
    unchanged = AuditEvent.objects.filter(action="grant", target_type="restrictedtag").count()
    restricted_tag_set(actor=SYSTEM, space=space, tag="salary", min_role="owner")
    changed = AuditEvent.objects.filter(action="grant", target_type="restrictedtag").order_by("id")

    assert (first, unchanged, changed.count()) == (1, 1, 2)
    assert changed.last().payload_data == {
        "before": {"restricted_tag": "salary", "min_role": "curator"},
        "after": {"restricted_tag": "salary", "min_role": "owner"}}
    assert RestrictedTag.objects.get(space=space, tag="salary").min_role == "owner"


def test_creating_a_data_key_is_audited(db):
    """Given a new space, when its first memory is written (which makes its data key), then
    the key's creation is in the audit log, by the system, in that space."""
    space = SpaceFactory(slug="keyed")
    make_memory(space)

    key = DataKey.objects.get(space=space)
    event = AuditEvent.objects.get(action="key_create", target_type="datakey", target_id=str(key.pk))
    assert (event.actor_label, event.space_slug) == ("system", "keyed")
    assert event.payload_data == {"after": {"master_key_id": key.master_key_id}}


# --- per-memory grants go with their memory -----------------------------------------------

@pytest.fixture
def granted(space):
    """A memory with a client-chosen id, restricted to owners and granted to a viewer."""
    viewer = UserFactory(username="grant-viewer")
    memory_services.memory_create(actor=SYSTEM, data={
        "space": space.slug, "id": "chosen-id-0001", "title": "Granted roadmap",
        "content": "The roadmap one viewer was allowed to read."})
    membership_grant(actor=SYSTEM, space=space, user=viewer, role="viewer")
    memory_restrict(actor=SYSTEM, memory_id="chosen-id-0001", min_role="owner")
    memory_grant_view(actor=SYSTEM, memory_id="chosen-id-0001", user=viewer)
    client = client_for(viewer)
    assert client.get("/api/v1/memories/chosen-id-0001/").status_code == 200
    return viewer, client


def _recreate_restricted(space) -> None:
    memory_services.memory_create(actor=SYSTEM, data={
        "space": space.slug, "id": "chosen-id-0001", "title": "Another roadmap",
        "content": "A different memory that happens to reuse the id."})
    memory_restrict(actor=SYSTEM, memory_id="chosen-id-0001", min_role="owner")


def test_a_grant_dies_with_its_memory_and_does_not_pass_to_a_new_one_with_its_id(space, granted):
    """Given a memory granted to a viewer, when it is deleted and a new memory restricted to
    owners is created with the same id, then the viewer does not see the new one."""
    _, client = granted

    memory_services.memory_delete(actor=SYSTEM, memory_id="chosen-id-0001")
    assert not MemoryUserGrant.objects.exists()
    _recreate_restricted(space)

    assert client.get("/api/v1/memories/chosen-id-0001/").status_code == 404


def test_deleting_the_space_removes_its_memories_grants(space, granted):
    """Given a granted memory, when its space is deleted, then no grant survives it."""
    retention.space_delete(actor=SYSTEM, slug=space.slug)
    assert not MemoryUserGrant.objects.exists()


def test_forgetting_the_space_removes_its_memories_grants(db):
    """Given a granted memory in a user space, when the space is forgotten, then its grants go."""
    owner = UserFactory(username="forget-owner")
    space = SpaceFactory(slug="forget-me", kind="user", members={owner: "owner"})
    memory = make_memory(space)
    memory_grant_view(actor=SYSTEM, memory_id=memory.pk, user=UserFactory(username="forget-viewer"))

    retention.space_forget(actor=SYSTEM, slug=space.slug)

    assert not MemoryUserGrant.objects.filter(content_object_id=memory.pk).exists()


def test_the_migration_moves_live_grants_and_drops_stale_ones(space):
    """Given generic guardian grants (as before) on a live memory and on a deleted one, when
    the migration step runs, then the live one moves to the memory's grant table and the
    stale one is gone."""
    step = import_module("governance.migrations.0004_token_scope_flag_and_memory_grants")
    viewer = UserFactory(username="migrated-viewer")
    live = make_memory(space)
    memory_type = ContentType.objects.get_for_model(Memory)
    permission = assign_perm("memories.view_memory", viewer, live).permission
    MemoryUserGrant.objects.all().delete()
    # bulk_create: guardian's save() refuses a row whose object is gone, which is the point.
    UserObjectPermission.objects.bulk_create(
        UserObjectPermission(user=viewer, permission=permission, content_type=memory_type, object_pk=pk)
        for pk in (live.pk, "mem_long_gone_0001"))

    # The step runs with the models as they were at that migration (the grant tables have
    # since moved app, in the state only).
    state = MigrationLoader(connection).project_state(
        ("governance", "0004_token_scope_flag_and_memory_grants"))
    step.move_memory_grants(state.apps, None)

    assert list(MemoryUserGrant.objects.values_list("content_object_id", "user_id")) == [(live.pk, viewer.pk)]
    assert not UserObjectPermission.objects.filter(content_type=memory_type).exists()
