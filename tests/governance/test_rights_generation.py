"""access.rights() kept across requests per rights generation: a token's next request reads no
rights table, and any change to a table rights are read from, by any path (plain SQL here,
as another process or the admin would write it), is seen by the very next request."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from governance import access
from governance.access import SYSTEM
from governance.models import RightsGeneration
from governance.services import membership_grant, restricted_tag_set
from memories.restrictions import memory_grant_view
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.personas import client_for

# Every table access.rights() and the granted-memories lookup read (the user's and the
# token's own rows come with each request's token lookup).
RIGHTS_TABLES = [
    "guardian_userobjectpermission",
    "guardian_groupobjectpermission",
    "auth_user_groups",
    "governance_apitoken_spaces",
    "governance_restrictedtag",
    "governance_spacemembership",
    "governance_memoryusergrant",
    "governance_memorygroupgrant",
    "memories_space",
]
RIGHTS_READS = ('FROM "guardian_userobjectpermission"', 'FROM "guardian_groupobjectpermission"',
                'FROM "governance_restrictedtag"')


def generation() -> int:
    return RightsGeneration.objects.get(pk=1).value


def plain_sql(sql: str, params: list | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])


@pytest.fixture
def shared(db):
    """A space with a memory, its owner, and a reader who is a viewer there."""
    owner = UserFactory(username="gen-owner")
    reader = UserFactory(username="gen-reader")
    space = SpaceFactory(slug="gen-space", members={owner: "owner", reader: "viewer"})
    return space, make_memory(space), reader


def status_of(client, memory) -> int:
    return client.get(f"/api/v1/memories/{memory.pk}/").status_code


@pytest.mark.parametrize("table", RIGHTS_TABLES)
def test_any_write_to_a_table_rights_are_read_from_moves_the_generation(db, table):
    """Given the generation, when any statement writes to one of the tables rights are read
    from (even one that changes no row), then the generation moves."""
    before = generation()

    plain_sql(f"DELETE FROM {table} WHERE false")

    assert generation() > before


def test_writes_elsewhere_leave_the_generation_alone(shared):
    """Given the generation, when memories are written, a token is used and a space renamed,
    then it stays put."""
    space, memory, reader = shared
    before = generation()

    make_memory(space, title="Another memory")
    assert status_of(client_for(reader), memory) == 200
    space.name = "Renamed"
    space.save()

    assert generation() == before


def test_the_next_request_of_a_token_reads_no_rights_table(shared):
    """Given a token that has made a request, when it makes another with no change of rights
    in between, then no rights table is read, and the answer is the same."""
    _, memory, reader = shared
    client = client_for(reader)
    assert status_of(client, memory) == 200

    with CaptureQueriesContext(connection) as queries:
        assert status_of(client, memory) == 200

    assert not [q["sql"] for q in queries.captured_queries if any(read in q["sql"] for read in RIGHTS_READS)]


def test_past_its_bound_the_memo_keeps_nothing_more_and_rights_are_read_afresh(shared, monkeypatch):
    """Given a memo already holding as many rights as it may, when a token makes two requests,
    then each reads the rights tables, and the answers are right."""
    _, memory, reader = shared
    monkeypatch.setattr(access, "MAX_KEPT_RIGHTS", 0)
    client = client_for(reader)
    assert status_of(client, memory) == 200

    with CaptureQueriesContext(connection) as queries:
        assert status_of(client, memory) == 200

    assert [q["sql"] for q in queries.captured_queries if any(read in q["sql"] for read in RIGHTS_READS)]


def test_a_role_removed_by_plain_sql_is_seen_by_the_next_request(shared):
    """Given a reader whose rights this process keeps, when their role is deleted outside any
    service, then their next request finds nothing."""
    _, memory, reader = shared
    client = client_for(reader)
    assert status_of(client, memory) == 200

    plain_sql("DELETE FROM guardian_userobjectpermission WHERE user_id = %s", [reader.pk])

    assert status_of(client, memory) == 404


def test_a_group_joined_by_plain_sql_is_seen_by_the_next_request(shared):
    """Given a user outside a space whose group holds a role there, when they are put in the
    group outside any service, then their next request sees the space's memory."""
    space, memory, _ = shared
    outsider = UserFactory(username="gen-outsider")
    team = Group.objects.create(name="gen-team")
    membership_grant(actor=SYSTEM, space=space, role="viewer", group=team)
    client = client_for(outsider)
    assert status_of(client, memory) == 404

    plain_sql("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", [outsider.pk, team.pk])

    assert status_of(client, memory) == 200


def test_a_tag_restricted_by_plain_sql_hides_the_memory_at_the_next_request(shared):
    """Given a viewer who sees a tagged memory, when the tag is restricted to curators outside
    any service, then the next request does not find it."""
    space, _, reader = shared
    tagged = make_memory(space, title="Salary bands", tags=["salary"])
    client = client_for(reader)
    assert status_of(client, tagged) == 200

    plain_sql("INSERT INTO governance_restrictedtag (space_id, tag, min_role, created_at)"
              " VALUES (%s, 'salary', 'curator', now())", [space.pk])

    assert status_of(client, tagged) == 404


def test_a_token_narrowed_by_plain_sql_is_seen_by_the_next_request(shared):
    """Given a token scoped to one space, when that space is taken off it outside any service,
    then its next request finds nothing there."""
    space, memory, reader = shared
    client = client_for(reader, spaces=[space])
    assert status_of(client, memory) == 200

    plain_sql("DELETE FROM governance_apitoken_spaces WHERE space_id = %s", [space.pk])

    assert status_of(client, memory) == 404


def test_a_grant_reaches_a_user_this_process_knew_to_hold_none(shared):
    """Given a viewer kept as holding no memory grant (a restricted memory hidden from them),
    when a curator grants them that memory, then their next request finds it."""
    space, _, reader = shared
    restricted_tag_set(actor=SYSTEM, space=space, tag="salary", min_role="curator")
    hidden = make_memory(space, title="Salary bands", tags=["salary"])
    client = client_for(reader)
    assert status_of(client, hidden) == 404

    memory_grant_view(actor=SYSTEM, memory_id=hidden.pk, user=reader)

    assert status_of(client, hidden) == 200


def test_a_rolled_back_change_never_hands_its_generation_to_another(db):
    """Given a change of rights that rolled back after its generation was read, when another
    change follows, then the generation is back where it was and then moves past the one the
    rolled-back change drew, so nothing kept under that value can be mistaken for current."""
    before = generation()
    sid = transaction.savepoint()
    plain_sql("DELETE FROM governance_restrictedtag WHERE false")
    drawn = generation()
    transaction.savepoint_rollback(sid)
    assert drawn > before
    assert generation() == before

    plain_sql("DELETE FROM governance_restrictedtag WHERE false")

    assert generation() > drawn
