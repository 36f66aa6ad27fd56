"""The Space model moved from memories to core (docs/architecture.md): an install
that upgrades keeps every role granted on its spaces, and old admin links still lead there."""

from __future__ import annotations

from importlib import import_module

from django.apps import apps as django_apps
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from guardian.core import ObjectPermissionChecker

from core.models import Space
from governance import access
from governance.roles import Role
from governance.services import membership_grant
from tests.factories import SpaceFactory, UserFactory

move = import_module("core.migrations.0001_initial")


def test_an_upgrade_keeps_the_roles_granted_on_spaces(db):
    """Given a database as it was before the move (space permissions held on the content type
    memories.space), when the migration step runs, then the same content type row is now
    core.space and the roles granted before still give their rights."""
    space = SpaceFactory(slug="before-the-move")
    viewer = UserFactory(username="old-viewer")
    membership_grant(actor=access.SYSTEM, space=space, user=viewer, role=Role.VIEWER)
    content_type = ContentType.objects.get_for_model(Space)
    ContentType.objects.filter(pk=content_type.pk).update(app_label="memories")
    ContentType.objects.clear_cache()

    move.move_space_content_type(django_apps, None)

    ContentType.objects.clear_cache()
    moved = ContentType.objects.get(pk=content_type.pk)
    assert (moved.app_label, moved.model) == ("core", "space")
    assert not ContentType.objects.filter(app_label="memories", model="space").exists()
    assert ObjectPermissionChecker(viewer).has_perm("space_read", space)
    access.forget_rights()
    assert access.spaces_visible(viewer).filter(pk=space.pk).exists()


def test_the_step_does_nothing_on_a_new_database(db):
    before = list(ContentType.objects.order_by("pk").values_list("pk", "app_label", "model"))
    move.move_space_content_type(django_apps, None)
    assert list(ContentType.objects.order_by("pk").values_list("pk", "app_label", "model")) == before


def test_old_admin_links_to_spaces_redirect_to_their_new_address(db):
    boss = UserFactory(username="link-boss", is_staff=True, is_superuser=True)
    space = SpaceFactory(slug="linked")
    client = Client()
    client.force_login(boss)

    answer = client.get(f"/admin/memories/space/{space.pk}/change/?tab=1")

    assert answer.status_code == 301
    assert answer["Location"] == f"/admin/core/space/{space.pk}/change/?tab=1"
    assert client.get(answer["Location"]).status_code == 200
