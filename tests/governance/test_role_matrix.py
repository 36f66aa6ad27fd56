"""The role matrix: every API route and every MCP tool, asked by every persona, answers as the
governance rules say.

Rules (governance.roles, governance.access):
- owner: everything, including manage (members, restricted tags, mode, retention, delete, forget);
  curator: read, write, edit any, curate (archive, restore, delete, version restore, restrict,
  merge, categories, entities, relations, the review queue), audit; contributor: read, write
  (add memories, edit and delete its own, log sessions, cards, PRD executions and thinking
  chains); auditor: read and audit; viewer: read.
- Who may not read a space or memory gets 404; who may read but not act gets 403; no
  credentials get 401.
- Restricted tags and restricted memories hide memories from roles ranked below their
  minimum role, unless the memory was granted to the user one by one.
- A token narrows its user's rights: to named spaces and to a role. A token scoped to
  spaces that were all deleted works in none (not in all of its user's spaces), and a
  scoped or role-capped token may not create spaces.

What the matrix covers is not chosen by hand: the routes come from the URL configuration
(every /api/v1/ route and each method its view accepts) and the tools from the MCP server's
own tools/list answer. Each has a row in CASES or TOOL_CASES below (a route may have several,
one per variant: a hidden memory, the caller's own one...) with the status every persona
gets. A route or tool without a row fails test_every_route_and_tool_has_a_row, which says
where to add it, and so does a row whose route or tool is gone.

One world is built for the module (tests/governance/conftest.py, plus what agents and
curators make through the API: a session and its card, a PRD execution, a thinking chain,
a category, relations, entities, a review item, a chat import) in a transaction rolled back
when the module ends. Every persona asks every row in turn; a write runs in a savepoint
rolled back at once, so a delete does not spoil the next persona. Writes are checked twice:
by status, and by whether anything changed. No answer may name a memory the persona may not
see.

Rows marked "AS IT IS" pin what SAM answers today where that is not what the rules above
would lead one to expect: the matrix keeps it from changing unnoticed, it does not fix it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from drf_spectacular.generators import EndpointEnumerator
from mcp import Client
from rest_framework.schemas.generators import is_api_view
from rest_framework.test import APIClient

from core.models import Space
from governance import retention
from governance.access import SYSTEM
from governance.models import ApiToken, RestrictedTag, SpaceMembership, UserMemorySettings
from governance.roles import Role
from governance.tokens import api_token_issue
from memories import services as memory_services
from memories import settle
from memories.capture import uploads
from memories.models import (
    Category,
    ChatImport,
    Entity,
    Memory,
    MemoryRelation,
    MemoryStats,
    ReviewItem,
    ReviewKind,
)
from prd.models import PRDDecision, PRDEvent, PRDExecution, ThinkingChain
from prd.sessions.models import AgentSession, CardValidation, MemoryCard, SessionEvent
from retrieval.models import TrainingRun
from samsite.mcp.dispatch import Caller
from samsite.mcp.server import build_server
from tests.factories import SpaceFactory, UserFactory
from tests.governance.conftest import VISIBLE, World, build_world
from tests.personas import bearer, client_for, client_with

API = "/api/v1/"

# --- the personas -------------------------------------------------------------------------

# The seven personas of the world; an agent (a token of the owner scoped to the space and
# capped at contributor, as an agent is given one); then three more tokens of the owner:
# one capped at viewer, one scoped to the owner's other space, and one scoped to a space of
# the owner that was then deleted.
COLUMNS = ("owner", "curator", "contributor", "auditor", "viewer", "agent", "stranger", "anonymous",
           "owner@viewer-token", "owner@other-space-token", "owner@deleted-space-token")
# Personas that must be answered exactly like a column: a curator through a group, and a
# superuser who holds no role anywhere.
ANSWERED_AS = {"curator@group": "curator", "superuser": "owner"}
PERSONAS = (*COLUMNS, *ANSWERED_AS)

# Memories the matrix adds to the world, with no restriction: whoever reads the space sees them.
ADDED = {"card_memory"}
VISIBLE_TO = {
    **{persona: names | (ADDED if persona not in ("stranger",) else set())
       for persona, names in VISIBLE.items()},
    "agent": {"open", "contributors", "contrib_only"} | ADDED,
    "owner@viewer-token": {"open", "contributors", "elsewhere"} | ADDED,
    "owner@other-space-token": {"elsewhere"},
    "owner@deleted-space-token": set(),
    "anonymous": set(),
}
SPACES_TO = {
    "owner": {"gov-space", "gov-other"},
    "curator": {"gov-space"},
    "contributor": {"gov-space"},
    "auditor": {"gov-space"},
    "viewer": {"gov-space"},
    "agent": {"gov-space"},
    "stranger": set(),
    "owner@viewer-token": {"gov-space", "gov-other"},
    "owner@other-space-token": {"gov-other"},
    "owner@deleted-space-token": set(),
    "anonymous": set(),
}
MEMBERS = {f"user:gov-{name}" for name in
           ("owner", "curator", "contributor", "auditor", "viewer", "member")} | {"group:gov-curators"}


def column(persona: str) -> str:
    return ANSWERED_AS.get(persona, persona)


def persona_authorization(world: World, persona: str) -> tuple[str | None, Any]:
    """The Authorization header a persona calls with, and the user behind it (None, None
    when anonymous)."""
    users = world.users
    if persona == "anonymous":
        return None, None
    if persona == "agent":
        agent = bearer(users["owner"], name="agent", spaces=[world.space], role=Role.CONTRIBUTOR)
        return agent, users["owner"]
    if persona == "owner@viewer-token":
        return bearer(users["owner"], role=Role.VIEWER), users["owner"]
    if persona == "owner@other-space-token":
        return bearer(users["owner"], spaces=[world.other]), users["owner"]
    if persona == "owner@deleted-space-token":
        # The token's only space goes: its scope is now empty, which must mean no space.
        gone = SpaceFactory(slug="gov-gone", members={users["owner"]: Role.OWNER})
        authorization = bearer(users["owner"], spaces=[gone])
        retention.space_delete(actor=SYSTEM, slug=gone.slug)
        return authorization, users["owner"]
    return bearer(users[persona]), users[persona]


# --- the world of the matrix ----------------------------------------------------------------

@dataclass
class Matrix:
    """The world, what the matrix added to it (`refs`: ids a path or a body names), and how
    each persona calls: a header for the REST API and an MCP server acting for it."""

    world: World
    refs: dict[str, Any]
    authorizations: dict[str, str | None]
    users: dict[str, Any]
    _clients: dict[str, APIClient] = field(default_factory=dict)
    _servers: dict[str, Any] = field(default_factory=dict)

    def names(self) -> dict[str, Any]:
        return {"slug": self.world.space.slug, **{name: m.pk for name, m in self.world.memories.items()},
                **self.refs}

    def id(self, name: str) -> Any:
        return self.names()[name]

    def client(self, persona: str) -> APIClient:
        if persona not in self._clients:
            authorization = self.authorizations[persona]
            self._clients[persona] = APIClient() if authorization is None else client_with(authorization)
        return self._clients[persona]

    def server(self, persona: str) -> Any:
        """The MCP server as the stdio transport runs it: acting for the token it was given
        (for the anonymous persona, for nobody)."""
        if persona not in self._servers:
            authorization = self.authorizations[persona]
            self._servers[persona] = build_server(
                None if authorization is None else Caller(authorization=authorization))
        return self._servers[persona]


def made(response: Any) -> Any:
    assert response.status_code in (200, 201), response.content
    return response.json()


def add_agent_work(world: World) -> dict[str, Any]:
    """What agents and curators make in the space, made through the API: a session with an
    event, a card citing it, a PRD execution with events and a decision, a thinking chain
    with a thought, a category, relations, entities, a review item and a chat import."""
    slug = world.space.slug
    contributor = client_for(world.users["contributor"], name="matrix-setup")
    owner = client_for(world.users["owner"], name="matrix-setup")
    refs: dict[str, Any] = {}
    Space.objects.filter(pk=world.space.pk).update(capture_sources=["jsonl"])

    refs["session"] = made(contributor.post(f"{API}sessions/", {"space": slug, "key": "matrix",
                                                                 "title": "Matrix session"}, format="json")
                           )["session"]["id"]
    made(contributor.post(f"{API}sessions/{refs['session']}/events/", {"events": [
        {"event_id": "ev-run", "event_type": "command_run", "text": "pytest -q",
         "data": {"command": "pytest -q", "exit_code": 0}}]}, format="json"))
    card = made(contributor.post(f"{API}cards/", {
        "space": slug, "card_type": "gotcha", "session": refs["session"], "evidence": ["ev-run"],
        "claim": "Pin django-q2 in requirements/base.txt",
        "body": "Run pip install django-q2 psycopg, then pin both in requirements/base.txt."}, format="json"))
    refs["card"] = card["id"]

    execution = made(contributor.post(f"{API}prd/executions/", {
        "space": slug, "prd_ref": "docs/prd/matrix.md", "title": "Matrix PRD",
        "requirements": [{"id": "R1", "title": "Rows"}, {"id": "R2", "title": "Columns"}]}, format="json"))
    refs["execution"] = execution["execution"]["id"]
    for event in ({"type": "requirement_started", "requirement_id": "R1", "summary": "Rows begun"},
                  {"type": "blocker_hit", "requirement_id": "R1", "summary": "A route has no row"}):
        made(contributor.post(f"{API}prd/executions/{refs['execution']}/events/", event, format="json"))
    made(contributor.post(f"{API}prd/executions/{refs['execution']}/decisions/",
                          {"decision": "Read the routes from the URL conf", "reason": "No list to forget"},
                          format="json"))
    refs["chain"] = made(contributor.post(f"{API}thinking-chains/", {"space": slug,
                                                                     "query": "Why a role matrix?"},
                                          format="json"))["id"]
    made(contributor.post(f"{API}thinking-chains/{refs['chain']}/thoughts/",
                          {"content": "Because routes grow faster than tests."}, format="json"))

    refs["category"] = made(owner.post(f"{API}spaces/{slug}/categories/", {
        "name": "matrix-notes", "keywords": ["checklist"]}, format="json"))["name"]
    open_id = world.id("open")
    refs["relation"] = made(owner.post(f"{API}memories/{open_id}/relations/", {
        "target": world.id("contributors"), "relation_type": "RELATES_TO"}, format="json"))["id"]
    # An edge to a memory most personas may not see: the graph must not show it to them.
    made(owner.post(f"{API}memories/{open_id}/relations/", {
        "target": world.id("hr"), "relation_type": "LEADS_TO"}, format="json"))
    refs["others_token"] = api_token_issue(user=UserFactory(username="gov-token-holder"), name="theirs")[0].pk
    refs["review"] = ReviewItem.objects.create(space=world.space, memory_id=open_id,
                                               kind=ReviewKind.ARCHIVE_SUGGESTION, reason="matrix").pk
    refs["chat_import"] = ChatImport.objects.create(space=world.space, source="jsonl",
                                                    file_name="history.jsonl", size_bytes=120,
                                                    created_by=world.users["contributor"]).pk
    refs["conversation"] = ChatImport.objects.create(space=world.space, source="api", status="done",
                                                     file_name="conversation of 2 messages", size_bytes=40,
                                                     report={"items": [], "kept": True, "messages": 2},
                                                     created_by=world.users["contributor"]).pk

    # The card's memory is the one that names things: settle it as the embedding job would,
    # so its entities are read.
    card_memory = MemoryCard.objects.get(pk=refs["card"]).memory_id
    settle.settle([card_memory])
    entities = {entity.name: entity.pk for entity in Entity.objects.filter(space=world.space)}
    assert {"django-q2", "psycopg"} <= set(entities), entities
    refs["entity"], refs["entity2"] = entities["django-q2"], entities["psycopg"]
    world.memories["card_memory"] = Memory.objects.get(pk=card_memory)
    return refs


def build_matrix() -> Matrix:
    world = build_world()
    authorizations, users = {}, {}
    for persona in PERSONAS:
        authorizations[persona], users[persona] = persona_authorization(world, persona)
    refs = add_agent_work(world)
    # As stored now (edits above moved versions), and nothing the matrix does not know of.
    world.memories = {name: Memory.objects.with_related().get(pk=memory.pk)
                      for name, memory in world.memories.items()}
    unknown = set(Memory.objects.values_list("pk", flat=True)) - {m.pk for m in world.memories.values()}
    assert not unknown, f"the world holds memories the matrix does not name: {unknown}"
    return Matrix(world=world, refs=refs, authorizations=authorizations, users=users)


@pytest.fixture(scope="module")
def matrix(django_db_setup, django_db_blocker) -> Iterator[Matrix]:
    """The world, built once for the module in a transaction rolled back at its end; each
    test runs in a savepoint of it (the `db` fixture)."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield build_matrix()
        transaction.set_rollback(True)
    cache.clear()


@pytest.fixture
def world(matrix: Matrix, db) -> World:
    """This module's tests share the matrix's world (the conftest one would clash with it)."""
    cache.clear()
    return matrix.world


# --- what the URL configuration and the MCP server offer -----------------------------------

def _patterns(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


def api_operations() -> set[tuple[str, str]]:
    """(method, route) for every /api/v1/ route of the URL configuration and each method its
    view accepts, routes written as the OpenAPI schema writes them (/api/v1/memories/{pk}/).
    A view that is not a DRF view is listed with method "ANY" (its methods are not declared)."""
    enumerator = EndpointEnumerator()
    found = set()
    for regex, callback in _patterns(get_resolver().url_patterns):
        route = enumerator.get_path_from_regex(regex)
        if not route.startswith(API) or route.endswith((".{format}", ".{format}/")):
            continue
        methods = enumerator.get_allowed_methods(callback) if is_api_view(callback) else ["ANY"]
        found.update((method, route) for method in methods)
    return found


def route_of(url: str) -> str:
    """The route (as api_operations() writes it) that serves `url`."""
    return EndpointEnumerator().get_path_from_regex("/" + resolve(url.split("?")[0]).route)


async def _listed_tools() -> list[str]:
    async with Client(build_server()) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


def mcp_tools() -> set[str]:
    """The names in the MCP server's tools/list answer."""
    return set(asyncio.run(_listed_tools()))


# --- probes: what a write would change, read before and after the request -----------------

Probe = Callable[[Matrix, Any], Any]


def memory_field(name: str, attribute: str) -> Probe:
    return lambda m, user: Memory.objects.filter(pk=m.id(name)).values_list(attribute, flat=True).first()


def memory_exists(name: str) -> Probe:
    return lambda m, user: Memory.objects.filter(pk=m.id(name)).exists()


def confidence(name: str) -> Probe:
    return lambda m, user: MemoryStats.objects.filter(memory_id=m.id(name)).values_list(
        "confidence", "usage_count").first()


def rows(model: Any, **where: str) -> Probe:
    """How many rows of `model` there are (where each field equals the named world id)."""
    return lambda m, user: model.objects.filter(**{k: m.id(v) for k, v in where.items()}).count()


def row_field(model: Any, ref: str, attribute: str) -> Probe:
    return lambda m, user: model.objects.filter(pk=m.id(ref)).values_list(attribute, flat=True).first()


def row_exists(model: Any, ref: str) -> Probe:
    return lambda m, user: model.objects.filter(pk=m.id(ref)).exists()


def space_memory_count(m: Matrix, user: Any) -> int:
    return Memory.objects.filter(space=m.world.space).count()


def space_state(m: Matrix, user: Any) -> Any:
    return Space.objects.filter(pk=m.world.space.pk).values_list("description", flat=True).first()


def space_exists(m: Matrix, user: Any) -> bool:
    return Space.objects.filter(pk=m.world.space.pk).exists()


def made_space_exists(m: Matrix, user: Any) -> bool:
    return Space.objects.filter(slug="gov-made").exists()


def memberships(m: Matrix, user: Any) -> set:
    return {(row.principal, row.role) for row in SpaceMembership.objects.filter(space=m.world.space)}


def restricted_tags(m: Matrix, user: Any) -> set:
    return set(RestrictedTag.objects.filter(space=m.world.space).values_list("tag", "min_role"))


def categories(m: Matrix, user: Any) -> set:
    return set(Category.objects.filter(space=m.world.space).values_list("name", "description"))


def entity_names(m: Matrix, user: Any) -> set:
    return {(entity.pk, entity.name) for entity in Entity.objects.filter(space=m.world.space)}


def my_mode(m: Matrix, user: Any) -> str | None:
    if user is None:
        return None
    return UserMemorySettings.objects.filter(user=user).values_list("mode", flat=True).first()


def my_tokens(m: Matrix, user: Any) -> int | None:
    return None if user is None else ApiToken.objects.filter(user=user).count()


def chain_state(m: Matrix, user: Any) -> Any:
    chain = ThinkingChain.objects.get(pk=m.id("chain"))
    return chain.status, len(chain.thoughts)


# --- the matrix: one row per route and method ------------------------------------------------

Body = Callable[[Matrix], dict] | dict | None


@dataclass(frozen=True)
class Case:
    method: str
    route: str                     # under /api/v1/, as the URL conf names it: "memories/{pk}/"
    expected: tuple[int, ...]      # one status per column of COLUMNS
    path: str = ""                 # the URL asked under /api/v1/ (default: the route), formatted
                                   # with Matrix.names(): "memories/{open}/"
    body: Body = None
    probe: Probe | None = None     # writes: what changes on success
    variant: str = ""              # what this case asks, when a route has several
    multipart: bool = False
    reveals: frozenset[str] = frozenset()  # AS IT IS: hidden memories the answer is known to name

    @property
    def operation(self) -> tuple[str, str]:
        """(method, route) as api_operations() names them."""
        return self.method, API + self.route

    @property
    def name(self) -> str:
        return f"{self.method} {API}{self.route}" + (f" ({self.variant})" if self.variant else "")

    def status_for(self, persona: str) -> int:
        return self.expected[COLUMNS.index(column(persona))]

    def url(self, m: Matrix) -> str:
        return API + (self.path or self.route).format(**m.names())

    def data(self, m: Matrix) -> dict | None:
        return self.body(m) if callable(self.body) else self.body


def version_of(name: str, **rest: Any) -> Callable[[Matrix], dict]:
    return lambda m: {"version": m.world.memories[name].version, **rest}


def new_memory(m: Matrix) -> dict:
    return {"space": m.world.space.slug, "title": "Matrix created note",
            "content": "A note the role matrix tries to add to the space."}


def new_conversation(m: Matrix) -> dict:
    return {"space": m.world.space.slug, "conversation_id": "matrix",
            "messages": [{"role": "user", "content": "I prefer tabs over spaces."},
                         {"role": "assistant", "content": "Noted."}]}


def history_upload(m: Matrix) -> dict:
    line = json.dumps({"conversation_id": "c1", "role": "user", "content": "I prefer tabs over spaces.",
                       "time": "2026-01-02T10:00:00Z"})
    return {"source": "jsonl", "file": SimpleUploadedFile("history.jsonl", line.encode())}


#                       own  cur  con  aud  vie  agt  str  ano  o@v  o@x  o@-
READ = (                200, 200, 200, 200, 200, 200, 404, 401, 200, 404, 404)
EVERYONE = (            200, 200, 200, 200, 200, 200, 200, 401, 200, 200, 200)
ANYONE = (              200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200)
WRITE = (               200, 200, 200, 403, 403, 200, 404, 401, 403, 404, 404)
WRITE_201 = (           201, 201, 201, 403, 403, 201, 404, 401, 403, 404, 404)
MANAGE = (              200, 403, 403, 403, 403, 403, 404, 401, 403, 404, 404)
MANAGE_204 = (          204, 403, 403, 403, 403, 403, 404, 401, 403, 404, 404)
CURATE = (              200, 200, 403, 403, 403, 403, 404, 401, 403, 404, 404)
CURATE_201 = (          201, 201, 403, 403, 403, 403, 404, 401, 403, 404, 404)
CURATE_204 = (          204, 204, 403, 403, 403, 403, 404, 401, 403, 404, 404)
AUDIT = (               200, 200, 403, 200, 403, 403, 404, 401, 403, 404, 404)
SEEN_BY_CURATORS = (    200, 200, 404, 404, 404, 404, 404, 401, 404, 404, 404)
SEEN_BY_CURATORS_201 = (201, 201, 404, 404, 404, 404, 404, 401, 404, 404, 404)
SEEN_BY_CURATORS_204 = (204, 204, 404, 404, 404, 404, 404, 401, 404, 404, 404)
AUTHOR = (              200, 200, 200, 403, 403, 403, 404, 401, 403, 404, 404)  # curators and its author
AUTHOR_204 = (          204, 204, 204, 403, 403, 403, 404, 401, 403, 404, 404)
CONTRADICT = (          200, 200, 403, 403, 403, 403, 404, 401, 403, 404, 404)  # AS IT IS: see below
NOT_YOURS = (           404, 404, 404, 404, 404, 404, 404, 401, 404, 404, 404)
SLUG = "spaces/{slug}/"
MEMORY = "memories/{pk}/"
SESSION = "sessions/{pk}/"
EXECUTION = "prd/executions/{pk}/"
CHAIN = "thinking-chains/{pk}/"

CASES: tuple[Case, ...] = (
    # the JSON Schema of a memory entry: public
    Case("GET", "schema/memory-entry.json", ANYONE),
    # spaces
    Case("GET", "spaces/", EVERYONE),
    Case("POST", "spaces/", (201, 201, 201, 201, 201, 403, 201, 401, 403, 403, 403),
         body={"slug": "gov-made", "name": "Made by the role matrix"}, probe=made_space_exists),
    Case("GET", SLUG, READ),
    Case("PATCH", SLUG, MANAGE, body={"description": "Edited by the role matrix"},
         probe=space_state),
    Case("DELETE", SLUG, MANAGE, probe=space_exists),
    Case("POST", SLUG + "forget/", MANAGE, probe=space_memory_count),
    Case("GET", SLUG + "stats/", READ),
    # members
    Case("GET", SLUG + "members/", READ),
    Case("POST", SLUG + "members/", MANAGE, body={"user": "gov-newcomer", "role": "viewer"},
         probe=memberships),
    Case("DELETE", SLUG + "members/{kind}:{name}/", MANAGE_204, path=SLUG + "members/user:gov-member/",
         probe=memberships),
    # restricted tags
    Case("GET", SLUG + "restricted-tags/", MANAGE),
    Case("POST", SLUG + "restricted-tags/", MANAGE, body={"tag": "legal", "min_role": "curator"},
         probe=restricted_tags),
    Case("DELETE", SLUG + "restricted-tags/{tag}/", MANAGE_204, path=SLUG + "restricted-tags/hr/",
         probe=restricted_tags),
    # categories
    Case("GET", SLUG + "categories/", READ),
    Case("POST", SLUG + "categories/", CURATE_201, body={"name": "matrix-made", "keywords": ["matrix"]},
         probe=categories),
    Case("PATCH", SLUG + "categories/{name}/", CURATE, path=SLUG + "categories/{category}/",
         body={"description": "Edited by the role matrix"}, probe=categories),
    Case("DELETE", SLUG + "categories/{name}/", CURATE_204, path=SLUG + "categories/{category}/",
         probe=categories),
    # entities
    Case("GET", SLUG + "entities/", READ),
    Case("GET", "entities/{pk}/", READ, path="entities/{entity}/"),
    Case("PATCH", "entities/{pk}/", CURATE, path="entities/{entity}/",
         body={"name": "django-q3"}, probe=entity_names),
    Case("DELETE", "entities/{pk}/", CURATE_204, path="entities/{entity}/", probe=entity_names),
    Case("POST", "entities/{pk}/merge/", CURATE, path="entities/{entity}/merge/",
         body=lambda m: {"other": m.id("entity2")}, probe=entity_names),
    # chat imports
    Case("POST", SLUG + "chat-imports/", (202, 202, 202, 403, 403, 202, 404, 401, 403, 404, 404),
         body=history_upload, multipart=True, probe=rows(ChatImport)),
    # Who uploaded it or the space's owners; everyone else is told it does not exist.
    Case("GET", "chat-imports/{pk}/", (200, 404, 200, 404, 404, 404, 404, 401, 404, 404, 404),
         path="chat-imports/{chat_import}/"),
    # conversations posted whole
    Case("POST", "conversations/", WRITE, body=new_conversation, probe=rows(ChatImport)),
    # As chat imports: who posted it or the space's owners.
    Case("GET", "conversations/{pk}/", (200, 404, 200, 404, 404, 404, 404, 401, 404, 404, 404),
         path="conversations/{conversation}/"),
    # memories: reads
    Case("GET", "memories/", EVERYONE),
    Case("GET", MEMORY, READ, path="memories/{open}/"),
    Case("GET", MEMORY, READ, path="memories/{archived}/", variant="archived"),
    Case("GET", MEMORY, SEEN_BY_CURATORS, path="memories/{hr}/", variant="tag restricted"),
    Case("GET", MEMORY, (200, 200, 200, 404, 404, 200, 404, 401, 404, 404, 404),
         path="memories/{contrib_only}/", variant="restricted to contributors"),
    Case("GET", MEMORY, (200, 404, 404, 404, 404, 404, 404, 401, 404, 404, 404),
         path="memories/{owner_only}/", variant="restricted to owners"),
    Case("GET", MEMORY, (200, 404, 404, 404, 200, 404, 404, 401, 404, 404, 404),
         path="memories/{granted}/", variant="granted one by one"),
    Case("GET", MEMORY, (200, 404, 404, 404, 404, 404, 404, 401, 200, 200, 404),
         path="memories/{elsewhere}/", variant="in the other space"),
    Case("GET", MEMORY + "versions/", READ, path="memories/{open}/versions/"),
    Case("GET", MEMORY + "versions/", SEEN_BY_CURATORS, path="memories/{hr}/versions/",
         variant="tag restricted"),
    Case("GET", MEMORY + "versions/{version}/", READ, path="memories/{open}/versions/1/"),
    Case("GET", MEMORY + "versions/{version}/", (200, 404, 404, 404, 404, 404, 404, 401, 404, 404, 404),
         path="memories/{owner_only}/versions/1/", variant="restricted to owners"),
    Case("GET", MEMORY + "graph/", READ, path="memories/{open}/graph/"),
    Case("GET", MEMORY + "graph/", SEEN_BY_CURATORS, path="memories/{hr}/graph/", variant="tag restricted"),
    Case("GET", MEMORY + "training/", READ, path="memories/{open}/training/"),
    Case("GET", MEMORY + "training/", SEEN_BY_CURATORS, path="memories/{hr}/training/",
         variant="tag restricted"),
    Case("GET", "me/memories/", EVERYONE),
    Case("GET", "me/export/", EVERYONE),
    # memories: writes
    Case("POST", "memories/", WRITE_201, body=new_memory, probe=space_memory_count),
    # Bulk answers 200 with a per-row refusal where a single create would answer 403 or 404.
    Case("POST", "memories/bulk/", (201, 201, 201, 200, 200, 201, 200, 401, 200, 200, 200),
         body=lambda m: {"items": [new_memory(m)]}, probe=space_memory_count),
    Case("PATCH", MEMORY, CURATE, path="memories/{open}/", variant="another's",
         body=version_of("open", title="Edited by the role matrix"), probe=memory_field("open", "version")),
    Case("PATCH", MEMORY, AUTHOR, path="memories/{contributors}/", variant="the contributor's own",
         body=version_of("contributors", title="Edited by the role matrix"),
         probe=memory_field("contributors", "version")),
    Case("PATCH", MEMORY, SEEN_BY_CURATORS, path="memories/{hr}/", variant="tag restricted",
         body=version_of("hr", title="Edited by the role matrix"), probe=memory_field("hr", "version")),
    Case("DELETE", MEMORY, CURATE_204, path="memories/{open}/", variant="another's",
         probe=memory_exists("open")),
    # What someone wrote is theirs to take back (docs/capture.md, "your controls").
    Case("DELETE", MEMORY, AUTHOR_204, path="memories/{contributors}/", variant="the contributor's own",
         probe=memory_exists("contributors")),
    Case("DELETE", MEMORY, SEEN_BY_CURATORS_204, path="memories/{hr}/", variant="tag restricted",
         probe=memory_exists("hr")),
    Case("POST", MEMORY + "archive/", CURATE, path="memories/{open}/archive/", body={"reason": "matrix"},
         probe=memory_field("open", "archived")),
    Case("POST", MEMORY + "archive/", SEEN_BY_CURATORS, path="memories/{hr}/archive/",
         variant="tag restricted", body={"reason": "matrix"}, probe=memory_field("hr", "archived")),
    Case("POST", MEMORY + "restore/", CURATE, path="memories/{archived}/restore/", body={"reason": "matrix"},
         probe=memory_field("archived", "archived")),
    Case("POST", MEMORY + "versions/{version}/restore/", CURATE, path="memories/{open}/versions/1/restore/",
         body=version_of("open"), probe=memory_field("open", "version")),
    Case("POST", MEMORY + "versions/{version}/restore/", CURATE, variant="the contributor's own",
         path="memories/{contributors}/versions/1/restore/", body=version_of("contributors"),
         probe=memory_field("contributors", "version")),
    Case("POST", MEMORY + "restrict/", CURATE, path="memories/{open}/restrict/",
         body={"restricted_to": "curator", "reason": "matrix"},
         probe=memory_field("open", "visibility_rank")),
    Case("POST", MEMORY + "restrict/", SEEN_BY_CURATORS, path="memories/{hr}/restrict/",
         variant="tag restricted", body={"restricted_to": "owner", "reason": "matrix"},
         probe=memory_field("hr", "visibility_rank")),
    Case("POST", MEMORY + "merge/", CURATE, path="memories/{open}/merge/",
         body=lambda m: {"sources": [m.id("contributors")], "version": m.world.memories["open"].version},
         probe=memory_field("contributors", "archived")),
    Case("POST", MEMORY + "resolve-conflict/", CURATE, path="memories/{open}/resolve-conflict/",
         body=lambda m: {"other": m.id("contributors"), "keep": "this"},
         probe=memory_field("contributors", "superseded_by_id")),
    Case("POST", MEMORY + "training/", CURATE_201, path="memories/{open}/training/",
         probe=rows(TrainingRun, memory="open")),
    # feedback
    Case("POST", MEMORY + "confirm/", WRITE, path="memories/{open}/confirm/", probe=confidence("open")),
    Case("POST", MEMORY + "confirm/", SEEN_BY_CURATORS, path="memories/{hr}/confirm/",
         variant="tag restricted", probe=confidence("hr")),
    # AS IT IS: contradicting takes the right to write (as confirming does), but it then edits
    # the memory (contested, a new version), which a contributor may do to its own memories
    # only: so a contributor may confirm another's memory but not contradict it (403).
    Case("POST", MEMORY + "contradict/", CONTRADICT, path="memories/{open}/contradict/",
         body={"reason": "matrix"}, probe=memory_field("open", "reliability")),
    Case("POST", MEMORY + "used/", READ, path="memories/{open}/used/", probe=confidence("open")),
    Case("POST", MEMORY + "used/", SEEN_BY_CURATORS, path="memories/{hr}/used/", variant="tag restricted",
         probe=confidence("hr")),
    # the graph
    Case("POST", MEMORY + "relations/", CURATE_201, path="memories/{open}/relations/",
         body=lambda m: {"target": m.id("contributors"), "relation_type": "SOLVES"},
         probe=rows(MemoryRelation, source="open")),
    Case("POST", MEMORY + "relations/", SEEN_BY_CURATORS_201, path="memories/{hr}/relations/",
         variant="from a tag restricted memory",
         body=lambda m: {"target": m.id("open"), "relation_type": "SOLVES"},
         probe=rows(MemoryRelation, source="hr")),
    Case("DELETE", "relations/{pk}/", CURATE_204, path="relations/{relation}/",
         probe=row_exists(MemoryRelation, "relation")),
    # the review queue
    Case("GET", "review/", EVERYONE),
    Case("POST", "review/{pk}/resolve/", CURATE, path="review/{review}/resolve/",
         body={"action": "keep"}, probe=row_field(ReviewItem, "review", "status")),
    # recall, context packs, prompts (everyone may ask; what they get back is checked below)
    Case("POST", "recall/", EVERYONE, body={"query_type": "recent", "k": 50, "track": False}),
    Case("POST", "context-packs/", EVERYONE,
         body={"pack_type": "boot", "k": 50, "token_budget": 20000, "track": False}),
    Case("POST", "prompt-augmentation/", READ, body=lambda m: {"space": m.world.space.slug,
                                                                     "message": "release checklist"}),
    # the caller's own mode
    Case("GET", "me/mode/", EVERYONE),
    Case("PUT", "me/mode/", EVERYONE, body={"mode": "capture_only"}, probe=my_mode),
    # the caller's own API tokens: issued by anyone signed in (a token whose spaces are all
    # gone has none left to give); another's token is as unknown as a missing one
    Case("GET", "me/tokens/", EVERYONE),
    Case("POST", "me/tokens/", (201, 201, 201, 201, 201, 201, 201, 401, 201, 201, 403),
         body={"name": "matrix"}, probe=my_tokens),
    Case("GET", "me/tokens/{pk}/", NOT_YOURS, path="me/tokens/{others_token}/"),
    Case("DELETE", "me/tokens/{pk}/", NOT_YOURS, path="me/tokens/{others_token}/",
         probe=row_field(ApiToken, "others_token", "revoked_at")),
    # audit timelines
    # AS IT IS: a curator's edge is audited with the id of its target, and the timeline does
    # not blank it (only superseded_by links are): an auditor reads the id of the memory the
    # edge leads to, hidden from it by a restricted tag (the edge open -> hr of the world).
    Case("GET", "memories/{id}/timeline/", AUDIT, path="memories/{open}/timeline/",
         reveals=frozenset({"hr"})),
    Case("GET", "memories/{id}/timeline/", SEEN_BY_CURATORS, path="memories/{hr}/timeline/",
         variant="tag restricted"),
    Case("GET", SLUG + "timeline/", AUDIT, reveals=frozenset({"hr"})),  # AS IT IS: as above
    # coding sessions and cards
    Case("GET", "sessions/", EVERYONE),
    Case("POST", "sessions/", WRITE_201, body=lambda m: {"space": m.world.space.slug, "title": "Another"},
         probe=rows(AgentSession)),
    Case("GET", SESSION, READ, path="sessions/{session}/"),
    Case("GET", SESSION + "events/", READ, path="sessions/{session}/events/"),
    Case("POST", SESSION + "events/", WRITE_201, path="sessions/{session}/events/",
         body={"events": [{"event_type": "chat_turn", "text": "Another turn", "event_id": "ev-matrix"}]},
         probe=rows(SessionEvent)),
    Case("GET", SESSION + "handoff/", READ, path="sessions/{session}/handoff/"),
    Case("GET", "sessions/latest-handoff/", READ, path="sessions/latest-handoff/?space={slug}"),
    Case("POST", SESSION + "compile/", WRITE, path="sessions/{session}/compile/"),
    Case("GET", "cards/", EVERYONE),
    Case("POST", "cards/", WRITE_201, probe=rows(MemoryCard),
         body=lambda m: {"space": m.world.space.slug, "card_type": "procedure", "claim": "Run pytest -q",
                         "session": m.id("session"), "evidence": ["ev-run"]}),
    Case("GET", "cards/{pk}/", READ, path="cards/{card}/"),
    Case("POST", "cards/{pk}/validations/", WRITE_201, path="cards/{card}/validations/",
         body={"status": "pass", "note": "matrix"}, probe=rows(CardValidation)),
    # PRD executions
    Case("GET", "prd/executions/", EVERYONE),
    Case("POST", "prd/executions/", WRITE_201, probe=rows(PRDExecution),
         body=lambda m: {"space": m.world.space.slug, "prd_ref": "docs/prd/another.md", "title": "Another"}),
    Case("GET", EXECUTION, READ, path="prd/executions/{execution}/"),
    Case("GET", EXECUTION + "context/", READ, path="prd/executions/{execution}/context/"),
    Case("GET", EXECUTION + "events/", READ, path="prd/executions/{execution}/events/"),
    Case("POST", EXECUTION + "events/", WRITE_201, path="prd/executions/{execution}/events/",
         body={"type": "requirement_started", "requirement_id": "R2", "summary": "Columns begun"},
         probe=rows(PRDEvent)),
    Case("GET", EXECUTION + "decisions/", READ, path="prd/executions/{execution}/decisions/"),
    Case("POST", EXECUTION + "decisions/", WRITE_201, path="prd/executions/{execution}/decisions/",
         body={"decision": "One row per route", "reason": "matrix"}, probe=rows(PRDDecision)),
    Case("POST", EXECUTION + "status/", WRITE, path="prd/executions/{execution}/status/",
         body={"status": "paused"}, probe=row_field(PRDExecution, "execution", "status")),
    # thinking chains
    Case("GET", "thinking-chains/", EVERYONE),
    Case("POST", "thinking-chains/", WRITE_201, probe=rows(ThinkingChain),
         body=lambda m: {"space": m.world.space.slug, "query": "Another question?"}),
    Case("POST", "thinking-chains/recall/", EVERYONE, body={"query": "role matrix"}),
    Case("GET", CHAIN, READ, path="thinking-chains/{chain}/"),
    Case("POST", CHAIN + "thoughts/", WRITE_201, path="thinking-chains/{chain}/thoughts/",
         body={"content": "And because personas multiply."}, probe=chain_state),
    Case("POST", CHAIN + "complete/", WRITE, path="thinking-chains/{chain}/complete/", probe=chain_state),
    Case("POST", CHAIN + "abandon/", WRITE, path="thinking-chains/{chain}/abandon/",
         body={"reason": "matrix"}, probe=chain_state),
)


# --- the matrix: one row per MCP tool --------------------------------------------------------

@dataclass(frozen=True)
class ToolCase:
    tool: str
    expected: tuple[int, ...]      # per column: 200 when the tool answers, else the status its error carries
    arguments: Callable[[Matrix], dict] | dict = field(default_factory=dict)
    variant: str = ""

    @property
    def name(self) -> str:
        return self.tool + (f" ({self.variant})" if self.variant else "")

    def status_for(self, persona: str) -> int:
        return self.expected[COLUMNS.index(column(persona))]

    def args(self, m: Matrix) -> dict:
        return self.arguments(m) if callable(self.arguments) else dict(self.arguments)


def in_space(**rest: Any) -> Callable[[Matrix], dict]:
    return lambda m: {"space": m.world.space.slug, **rest}


def naming(**arguments: Any) -> Callable[[Matrix], dict]:
    """Arguments where a value that names a world thing stands for its id:
    naming(memory_id="open", feedback="confirm") -> {"memory_id": <the open memory's id>, ...}."""
    return lambda m: {key: m.names().get(value, value) if isinstance(value, str) else value
                      for key, value in arguments.items()}


TOOL_CASES: tuple[ToolCase, ...] = (
    ToolCase("recall", EVERYONE, {"query": "release checklist"}),
    ToolCase("search_past_solutions", EVERYONE, {"problem": "release checklist"}),
    ToolCase("find_similar_issues", EVERYONE, {"context": "release checklist"}),
    ToolCase("recall_decision", EVERYONE, {"topic": "release checklist"}),
    ToolCase("get_project_patterns", READ, in_space()),
    ToolCase("get_category_summary", READ, in_space(category="matrix-notes")),
    ToolCase("memory_stats", READ, in_space()),
    ToolCase("augment_prompt", READ, in_space(message="release checklist")),
    ToolCase("context_pack", EVERYONE, {"pack_type": "boot", "token_budget": 20000}),
    ToolCase("remember", WRITE, in_space(title="Remembered by the matrix",
                                         content="A note the role matrix asks an agent to keep.")),
    ToolCase("forget", CURATE, naming(memory_id="open")),
    ToolCase("forget", SEEN_BY_CURATORS, naming(memory_id="hr"), variant="tag restricted"),
    ToolCase("forget", AUTHOR, naming(memory_id="contributors", permanent=True),
             variant="for good, the contributor's own"),
    ToolCase("memory_feedback", WRITE, naming(memory_id="open", feedback="confirm")),
    ToolCase("memory_feedback", CONTRADICT, naming(memory_id="open", feedback="contradict"),
             variant="contradict"),  # AS IT IS: as POST memories/{pk}/contradict/
    ToolCase("ingest_chat_history", WRITE, in_space(
        source="jsonl", content=json.dumps({"conversation_id": "c1", "role": "user",
                                            "content": "I prefer tabs.", "time": "2026-01-02T10:00:00Z"}))),
    ToolCase("chat_import_status", (200, 404, 200, 404, 404, 404, 404, 401, 404, 404, 404),
             naming(import_id="chat_import")),
    ToolCase("capture_conversation", WRITE, in_space(
        messages=[{"role": "user", "content": "I prefer tabs over spaces."}])),
    ToolCase("conversation_status", (200, 404, 200, 404, 404, 404, 404, 401, 404, 404, 404),
             naming(capture_id="conversation")),
    ToolCase("session_start", WRITE, in_space(title="Started by the matrix")),
    ToolCase("session_log", WRITE, lambda m: {
        "session_id": m.id("session"), "events": [{"event_type": "chat_turn", "text": "A tool turn"}]}),
    ToolCase("session_handoff", READ, naming(session_id="session")),
    ToolCase("card_check", WRITE, naming(card_id="card", status="pass")),
    ToolCase("prd_start", WRITE, in_space(prd_ref="docs/prd/another.md", title="Another")),
    ToolCase("prd_executions", EVERYONE),
    ToolCase("prd_context", READ, naming(execution_id="execution")),
    ToolCase("prd_event", WRITE, naming(execution_id="execution", type="requirement_started",
                                        requirement_id="R2", summary="Columns begun")),
    ToolCase("prd_decision", WRITE, naming(execution_id="execution", decision="Tools get rows too")),
    ToolCase("start_thinking", WRITE, in_space(query="Another question?")),
    ToolCase("think", WRITE, naming(chain_id="chain", content="A thought from a tool.")),
    ToolCase("finish_thinking", WRITE, naming(chain_id="chain")),
    ToolCase("recall_reasoning", EVERYONE, {"query": "role matrix"}),
)


# --- the rows cover what SAM offers -------------------------------------------------------------

def test_every_route_and_tool_has_a_row():
    """Given the routes of the URL configuration and the tools of the MCP server, then each has
    a row in the matrix, and each row names a route or tool that exists."""
    problems = []
    routes, rowed = api_operations(), {case.operation for case in CASES}
    problems += [f"{method} {route} has no row in the role matrix: add Case({method!r}, "
                 f"{route.removeprefix(API)!r}, <one status per persona of COLUMNS>, path=..., body=...) "
                 f"to CASES in tests/governance/test_role_matrix.py"
                 for method, route in sorted(routes - rowed)]
    problems += [f"{method} {route} has a row in the role matrix, but the URL configuration has no such "
                 f"route and method: remove or fix its Case in CASES (tests/governance/test_role_matrix.py)"
                 for method, route in sorted(rowed - routes)]
    tools, rowed_tools = mcp_tools(), {case.tool for case in TOOL_CASES}
    problems += [f"MCP tool {tool!r} has no row in the role matrix: add ToolCase({tool!r}, <one status per "
                 f"persona of COLUMNS>, <arguments>) to TOOL_CASES in tests/governance/test_role_matrix.py"
                 for tool in sorted(tools - rowed_tools)]
    problems += [f"MCP tool {tool!r} has a row in the role matrix, but the MCP server lists no such tool: "
                 f"remove or fix its ToolCase in TOOL_CASES (tests/governance/test_role_matrix.py)"
                 for tool in sorted(rowed_tools - tools)]
    assert not problems, "\n".join(problems)


def test_every_row_has_one_status_per_column():
    assert all(len(case.expected) == len(COLUMNS) for case in (*CASES, *TOOL_CASES))
    assert len({case.name for case in CASES}) == len(CASES)
    assert len({case.name for case in TOOL_CASES}) == len(TOOL_CASES)


# --- asking the API ----------------------------------------------------------------------------

@contextmanager
def undone(writes: bool = True) -> Iterator[None]:
    """A savepoint rolled back when the block ends, so one persona's write is not the next
    one's world. Reads need none (what a read records, the test's own rollback takes back)."""
    if not writes:
        yield
        return
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def ask(client: APIClient, case: Case, m: Matrix) -> tuple[Any, bytes]:
    """The response and its whole body, read before the savepoint ends (an export streams)."""
    data = case.data(m)
    if case.multipart:
        response = client.generic(case.method, case.url(m), data=encode_multipart(BOUNDARY, data or {}),
                                  content_type=MULTIPART_CONTENT)
    else:
        response = client.generic(case.method, case.url(m), data=json.dumps(data) if data is not None else "",
                                  content_type="application/json")
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return response, content


def returned_ids(case: Case, body: Any) -> set[str] | None:
    """The memory ids a list-like answer holds (None for other endpoints)."""
    if (case.method, case.route) == ("GET", "memories/"):
        return {m["id"] for m in body["results"]}
    if (case.method, case.route) == ("POST", "recall/"):
        return {m["id"] for m in body["data"]["ranked_memory_list"]}
    if (case.method, case.route) == ("POST", "context-packs/"):
        return {m["id"] for m in body["json"]["items"]}
    return None


def leaks(persona: str, m: Matrix, text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """Memories `text` names that the persona may not see (besides those `known` to leak).
    The archived memory is readable, just not listed by default."""
    persona = column(persona)
    readable = VISIBLE_TO[persona] | ({"archived"} if "gov-space" in SPACES_TO[persona] else set())
    hidden = sorted(name for name in set(m.world.memories) - readable - known if m.world.id(name) in text)
    return [f"mentions hidden memories {hidden}"] if hidden else []


def content_problems(case: Case, persona: str, m: Matrix, response: Any, content: bytes) -> list[str]:
    """What is wrong with a successful answer's content for this persona."""
    status, text = response.status_code, content.decode()
    problems = leaks(persona, m, text, case.reveals)
    if response.get("Content-Type") != "application/json":
        return problems  # an export: JSON lines
    persona, body = column(persona), json.loads(text)
    ids = returned_ids(case, body)
    if ids is not None:
        expected = {m.world.id(name) for name in VISIBLE_TO[persona]}
        if ids != expected:
            names = {name for name, memory in m.world.memories.items() if memory.pk in ids}
            problems.append(f"returned {sorted(names)}, expected {sorted(VISIBLE_TO[persona])}")
    if (case.method, case.route) == ("GET", "spaces/"):
        slugs = {s["slug"] for s in body["results"]}
        if slugs != SPACES_TO[persona]:
            problems.append(f"listed spaces {sorted(slugs)}, expected {sorted(SPACES_TO[persona])}")
    if (case.method, case.route) == ("GET", SLUG + "members/"):
        principals = {member["principal"] for member in body["results"]}
        if principals != MEMBERS:
            problems.append(f"listed members {sorted(principals)}")
    if (case.method, case.route) == ("POST", "memories/bulk/"):
        created = body["created"]
        if created != (1 if status == 201 else 0):
            problems.append(f"bulk created {created} rows with status {status}")
        if status == 200:
            # A refused row tells a reader it may not write, and a non-reader only what it
            # would hear of a space that does not exist.
            error = body["results"][0]["errors"]["space"][0]
            wanted = ("You may not add memories to space 'gov-space'."
                      if "gov-space" in SPACES_TO[persona] else "No space 'gov-space'.")
            if error != wanted:
                problems.append(f"bulk row error {error!r}, expected {wanted!r}")
    return problems


def writes(case: Case, status: int) -> bool:
    """Whether an answer with this status must have changed the store."""
    if (case.method, case.route) == ("POST", "memories/bulk/"):
        return status == 201  # 200: every row was refused
    return 200 <= status < 300


def error_code_problem(status: int, content: bytes) -> str | None:
    wanted = {401: "not_authenticated", 403: "forbidden", 404: "not_found"}.get(status)
    code = json.loads(content).get("error", {}).get("code") if wanted else None
    return None if code == wanted else f"error code {code!r}, expected {wanted!r}"


def discard_upload(content: bytes | str) -> None:
    """An upload waits in var/imports/ for a job that never runs here: remove it."""
    try:
        body = json.loads(content)
    except ValueError:
        return
    for key in ("id", "import_id"):
        if isinstance(body, dict) and str(body.get(key, "")).startswith("imp_"):
            uploads.discard(body[key])


def row_report(name: str, expected: tuple[int, ...], got: dict[str, int], details: list[str]) -> str:
    cells = lambda statuses: ", ".join(f"{p}={s}" for p, s in statuses)  # noqa: E731
    wanted = [(p, expected[COLUMNS.index(column(p))]) for p in PERSONAS]
    return (f"{name}\n  expected: {cells(wanted)}\n  answered: {cells(got.items())}\n  "
            + "\n  ".join(details))


@pytest.mark.matrix
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_route_answers_every_persona_as_its_role_allows(matrix, db, case):
    """Given the world, when each persona calls the route, then the status, the content (lists,
    hidden memories) and the store (writes) follow the rules."""
    assert route_of(case.url(matrix)) == API + case.route, f"{case.url(matrix)} is not served by {case.name}"
    got: dict[str, int] = {}
    problems: list[str] = []
    for persona in PERSONAS:
        expected, user = case.status_for(persona), matrix.users[persona]
        with undone(case.method != "GET"):
            before = case.probe(matrix, user) if case.probe else None
            response, content = ask(matrix.client(persona), case, matrix)
            after = case.probe(matrix, user) if case.probe else None
        discard_upload(content)
        status = got[persona] = response.status_code
        if status != expected:
            problems.append(f"{persona}: {status}, expected {expected} ({content[:160]!r})")
            continue
        if case.probe and (before != after) != writes(case, status):
            problems.append(f"{persona}: {'changed' if before != after else 'left'} the store "
                            f"({before!r} -> {after!r}) with status {status}")
        if 200 <= status < 300:
            problems += [f"{persona}: {problem}"
                         for problem in content_problems(case, persona, matrix, response, content)]
        elif (problem := error_code_problem(status, content)) is not None:
            problems.append(f"{persona}: {problem}")
    assert not problems, row_report(case.name, case.expected, got, problems)


# --- asking the MCP server ---------------------------------------------------------------------

async def _on_the_test_thread(func: Callable[..., Any], *args: Any, **options: Any) -> Any:
    return await sync_to_async(func, thread_sensitive=True)(*args)


@pytest.fixture
def tools_on_the_test_thread(monkeypatch):
    """Run MCP tools where the test's transaction is.

    The SDK runs a sync tool on a worker thread, whose own database connection would not see
    the uncommitted world: here the tool runs on the test's thread instead (the event loop
    runs beside it, as asgiref's async_to_sync arranges). A tool calls the API through
    Django's WSGI handler, whose request signals would close the test's connection: they
    are held off, as Django's test client does.
    """
    monkeypatch.setattr(anyio.to_thread, "run_sync", _on_the_test_thread)
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


async def _call_tool(server: Any, tool: str, arguments: dict) -> Any:
    async with Client(server) as client:
        return await client.call_tool(tool, arguments)


def tool_answer(server: Any, tool: str, arguments: dict) -> tuple[int, str]:
    """200 and the tool's JSON text, or the status its error carries and the error's text."""
    result = async_to_sync(_call_tool)(server, tool, arguments)
    text = result.content[0].text if result.content else ""
    if not result.is_error:
        return 200, text
    try:
        error = json.loads(text[text.index("{"):])["error"]
    except (ValueError, KeyError):
        return 0, text  # not SAM's error shape (bad arguments): no status to compare
    return int(error.get("status", 0)), text


@pytest.mark.matrix
@pytest.mark.parametrize("case", TOOL_CASES, ids=lambda case: case.name)
def test_each_mcp_tool_answers_every_persona_as_its_role_allows(matrix, db, tools_on_the_test_thread, case):
    """Given the world, when each persona calls the tool with its own token, then the tool
    answers or fails as the REST call behind it does, and never names a hidden memory."""
    got: dict[str, int] = {}
    problems: list[str] = []
    for persona in PERSONAS:
        expected = case.status_for(persona)
        with undone():
            status, text = tool_answer(matrix.server(persona), case.tool, case.args(matrix))
        if status == 200:
            discard_upload(text)
        got[persona] = status
        if status != expected:
            problems.append(f"{persona}: {status}, expected {expected} ({text[:160]!r})")
        elif status == 200:
            problems += [f"{persona}: {p}" for p in leaks(persona, matrix, text)]
    assert not problems, row_report(case.name, case.expected, got, problems)


# --- edges where a hidden memory could have leaked ---------------------------------------

def test_superseded_by_does_not_reveal_that_a_hidden_memory_exists(world):
    """Given a contributor and a memory tagged with a tag restricted to curators, when the
    contributor points its own memory's superseded_by at it, then SAM answers exactly as it
    does for an id that does not exist."""
    client = client_for(world.users["contributor"])
    own = world.memories["contributors"]

    def point_at(target: str):
        return client.patch(f"/api/v1/memories/{own.pk}/",
                            {"version": own.version, "superseded_by": target}, format="json")

    missing = point_at("mem_no_such_memory")
    hidden = point_at(world.id("hr"))

    assert missing.status_code == 400
    assert hidden.status_code == 400, hidden.content
    assert hidden.json()["error"]["fields"] == {
        "superseded_by": [f"No memory '{world.id('hr')}' in space 'gov-space'."]}


def test_a_visible_memory_does_not_name_a_hidden_successor(world):
    """Given a memory superseded by one restricted to owners, when a viewer reads the first,
    then nothing in the answer names the hidden one."""
    memory_services.memory_update(actor=SYSTEM, memory_id=world.id("open"),
                                  expected_version=world.memories["open"].version,
                                  changes={"superseded_by": world.id("owner_only")})
    client = client_for(world.users["viewer"])

    detail = client.get(f"/api/v1/memories/{world.id('open')}/")
    listed = client.get("/api/v1/memories/")

    assert detail.status_code == listed.status_code == 200
    assert world.id("owner_only") not in detail.content.decode()
    assert world.id("owner_only") not in listed.content.decode()


def test_a_contributor_adding_a_memory_with_a_restricted_tag_is_told_it_was_stored(world):
    """Given a tag restricted to curators, when a contributor adds a memory carrying it, then
    the memory is stored once and the answer says so (201), not 404."""
    client = client_for(world.users["contributor"])
    before = Memory.objects.filter(space=world.space).count()

    response = client.post("/api/v1/memories/", {"space": world.space.slug, "title": "Matrix created note",
                                                 "content": "A note the role matrix tries to add.",
                                                 "tags": ["hr"]}, format="json")

    assert Memory.objects.filter(space=world.space).count() == before + 1
    assert response.status_code == 201, response.content


def test_a_deleted_memory_stays_hidden_in_the_space_timeline(world):
    """Given a memory tagged with a tag restricted to curators, when a curator deletes it,
    then the auditor's space timeline still shows nothing of what it said."""
    client = client_for(world.users["auditor"])
    timeline = f"/api/v1/spaces/{world.space.slug}/timeline/?page_size=500"
    title = world.memories["hr"].title
    assert title not in client.get(timeline).content.decode()

    curator = client_for(world.users["curator"])
    assert curator.delete(f"/api/v1/memories/{world.id('hr')}/").status_code == 204
    response = client.get(timeline)

    assert response.status_code == 200
    assert title not in response.content.decode()
