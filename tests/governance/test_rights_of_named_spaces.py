"""access.rights(actor, only=...): the rights in the named spaces only, the same as the full
rights narrowed to them, and never stale within a request after a change of rights."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from governance import access
from governance.access import SYSTEM
from governance.middleware import RightsMemoMiddleware
from governance.services import api_token_issue, membership_grant, membership_revoke, restricted_tag_set
from tests.factories import SpaceFactory, UserFactory


@pytest.fixture
def holder(db):
    """A user who is a viewer in one space, a curator in another, and holds nothing in a third;
    the viewer's space restricts a tag to curators."""
    user = UserFactory(username="named-holder")
    viewed = SpaceFactory(slug="named-viewed", members={user: "viewer"})
    curated = SpaceFactory(slug="named-curated", members={user: "curator"})
    other = SpaceFactory(slug="named-other")
    restricted_tag_set(actor=SYSTEM, space=viewed, tag="salary", min_role="curator")
    return user, viewed, curated, other


def test_the_rights_of_named_spaces_are_the_full_rights_narrowed_to_them(holder):
    """Given a user's full rights, when asked for some spaces only, then those spaces' rights
    come back unchanged (roles and hidden tags), and a space they hold nothing in is absent."""
    user, viewed, curated, other = holder
    full = access.rights(user)

    named = access.rights(user, only=[viewed.pk, other.pk])

    assert named == {viewed.pk: full[viewed.pk]}
    assert named[viewed.pk].hidden_tags == ("salary",)
    assert access.rights(user, only=[curated.pk]) == {curated.pk: full[curated.pk]}
    assert access.rights(user, only=[]) == {}


def test_a_token_narrowed_to_spaces_narrows_the_named_rights_too(holder):
    """Given a token scoped to one space, when rights are asked for both held spaces, then only
    the token's space is there."""
    user, viewed, curated, _ = holder
    token, _ = api_token_issue(user=user, name="one space", spaces=[viewed])
    user.sam_token = token

    assert set(access.rights(user, only=[viewed.pk, curated.pk])) == {viewed.pk}


@pytest.mark.django_db
def test_named_rights_within_a_request_follow_a_grant_and_a_revoke(holder):
    """Given a request that asked for a space's rights (memoised for the request), when the user
    is granted a role there and later revoked, then each later ask in the request sees it."""
    user, _, _, other = holder
    seen: list[bool] = []

    def view(request):
        seen.append(other.pk in access.rights(user, only=[other.pk]))
        membership_grant(actor=SYSTEM, space=other, user=user, role="viewer")
        seen.append(other.pk in access.rights(user, only=[other.pk]))
        seen.append(other.pk in access.rights(user))
        membership_revoke(actor=SYSTEM, space=other, user=user)
        seen.append(other.pk in access.rights(user, only=[other.pk]))
        return HttpResponse("ok")

    RightsMemoMiddleware(view)(RequestFactory().get("/"))

    assert seen == [False, True, True, False]
