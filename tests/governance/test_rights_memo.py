"""access.rights() is computed once per HTTP request, and a change of rights within the
request is seen by the checks after it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from guardian.shortcuts import assign_perm

from governance import access, roles
from governance.access import SYSTEM
from governance.middleware import RightsMemoMiddleware
from governance.services import membership_grant, membership_revoke
from tests.factories import SpaceFactory, UserFactory, make_memory

# Each computation of rights() reads the space permissions a user holds through its
# groups once (guardian's generic group table); nothing else reads that table in these
# requests, so counting these statements counts the computations.
RIGHTS_MARKER = 'FROM "guardian_groupobjectpermission"'


def rights_computations(queries) -> int:
    return sum(RIGHTS_MARKER in q["sql"] for q in queries)


def test_a_memory_patch_computes_the_callers_rights_once(api, space):
    """Given a memory, when its owner edits it over the API (find, check, hide links: three
    asks), then the rights queries run once."""
    memory = make_memory(space)

    with CaptureQueriesContext(connection) as queries:
        response = api.patch(f"/api/v1/memories/{memory.pk}/",
                             {"version": 1, "title": "Prefer pytest fixtures always"}, format="json")

    assert response.status_code == 200, response.content
    assert rights_computations(queries.captured_queries) == 1


def test_a_recall_computes_the_callers_rights_once(api, space):
    """Given a space, when its owner recalls (scope, visibility, audit), then once."""
    make_memory(space)

    with CaptureQueriesContext(connection) as queries:
        response = api.post("/api/v1/recall/", {"query": "pytest fixtures"}, format="json")

    assert response.status_code == 200, response.content
    assert rights_computations(queries.captured_queries) == 1


def test_outside_a_request_nothing_is_memoised(space, user):
    """Given no request (a job or a command), when rights are asked twice, then they are
    computed twice: a long job must see rights as they are now."""
    with CaptureQueriesContext(connection) as queries:
        access.rights(user)
        access.rights(user)

    assert rights_computations(queries.captured_queries) == 2


@pytest.mark.django_db
def test_a_grant_within_a_request_is_seen_by_a_later_check_in_it():
    """Given a request whose actor cannot read a space, when a grant to it is made inside
    that request, then a check later in the same request sees the new right (and a
    revoke takes it away again)."""
    space = SpaceFactory(slug="memo-space")
    newcomer = UserFactory(username="memo-newcomer")
    seen: list[bool] = []

    def view(request):
        seen.append(access.can(newcomer, "read", space))
        membership_grant(actor=SYSTEM, space=space, user=newcomer, role="viewer")
        seen.append(access.can(newcomer, "read", space))
        seen.append(access.can(newcomer, "read", space))
        membership_revoke(actor=SYSTEM, space=space, user=newcomer)
        seen.append(access.can(newcomer, "read", space))
        return HttpResponse("ok")

    with CaptureQueriesContext(connection) as queries:
        RightsMemoMiddleware(view)(RequestFactory().get("/"))

    assert seen == [False, True, True, False]
    # Computed before the grant, after it, and after the revoke: the repeat was memoised.
    assert rights_computations(queries.captured_queries) == 3


@pytest.mark.django_db
def test_the_memo_ends_with_the_request():
    """Given a request that asked for a user's rights, when the request is over and the
    user gains a right that no SAM service announced (as a grant made by another web
    process looks from this one), then the next ask sees it: nothing of the request's
    memo is kept."""
    space = SpaceFactory(slug="memo-after")
    reader = UserFactory(username="memo-reader")
    RightsMemoMiddleware(lambda request: (access.rights(reader), HttpResponse())[1])(
        RequestFactory().get("/"))

    # Straight through guardian: no forget_rights() call could hide a memo that outlived
    # the request (membership_grant clears the memo itself).
    assign_perm(f"memories.{roles.PERM_READ}", reader, space)
    with CaptureQueriesContext(connection) as queries:
        after = access.rights(reader)

    assert space.pk in after
    assert rights_computations(queries.captured_queries) == 1
