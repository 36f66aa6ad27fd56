"""What a database dump shows: only the columns docs/security.md lists as plaintext.

The database is filled through the HTTP API with every kind of write, each user-written
string carrying its own canary word. Then pg_dump (a separate session, so the writes are
committed for real) is searched for every canary:

- a canary written as free text (titles, content, descriptions, queries, reasons...)
  must appear nowhere;
- a canary written as a label (slugs, tags, PRD refs, requirement and agent ids...) may
  appear only in a column the plaintext table of docs/security.md lists;
- and every column that table lists must hold one, so the list cannot go stale.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import ForeignKey
from rest_framework.test import APIClient

from core.models import Space
from governance.access import SYSTEM
from governance.crypto import cipher
from governance.models import DataKey
from governance.services import membership_grant
from memories.models import Entity, Memory, ReviewItem, ReviewKind
from tests.factories import UserFactory
from tests.governance.test_encryption import _pg_dump
from tests.governance.test_role_matrix import api_operations, route_of
from tests.personas import bearer, client_for

SECURITY_DOC = Path(settings.BASE_DIR) / "docs" / "security.md"
PLAINTEXT_HEADING = "### What is stored in plaintext"
# Canaries are lower-case letters only, so no normaliser, stemmer or detector splits them.
# Case-sensitive: ULIDs (upper case) and random tokens must not look like canaries.
CANARY = re.compile(r"(?<![A-Za-z0-9])qz[a-z]+")
MEMORIES = "/api/v1/memories/"
EXECUTIONS = "/api/v1/prd/executions/"
CHAINS = "/api/v1/thinking-chains/"


class Canaries:
    """Unique words to write, each remembered as free text or as a label."""

    def __init__(self) -> None:
        self.text: set[str] = set()
        self.label: set[str] = set()

    def t(self, name: str) -> str:
        word = f"qz{name}"
        assert word not in self.text | self.label
        self.text.add(word)
        return word

    def l(self, name: str) -> str:  # noqa: E743 - short on purpose: used on every line below
        word = f"qz{name}"
        assert word not in self.text | self.label
        self.label.add(word)
        return word


def documented_plaintext_columns() -> set[str]:
    """`table.column` of every row of the plaintext table in docs/security.md."""
    text = SECURITY_DOC.read_text()
    assert PLAINTEXT_HEADING in text, f"docs/security.md has no '{PLAINTEXT_HEADING}' section"
    section = text.split(PLAINTEXT_HEADING, 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", section, re.MULTILINE))


def references_to(columns: set[str]) -> set[str]:
    """The foreign-key columns of every model that point at one of `columns` (a memory's id is
    in every table that references the memory)."""
    found = set()
    for model in apps.get_models(include_auto_created=True):
        for field in model._meta.concrete_fields:
            if isinstance(field, ForeignKey):
                target = field.target_field
                if f"{target.model._meta.db_table}.{target.column}" in columns:
                    found.add(f"{model._meta.db_table}.{field.column}")
    return found


def canaries_by_column(dump: str) -> dict[str, set[str]]:
    """canary -> the `table.column`s of the dump that hold it (COPY blocks of --data-only)."""
    found: dict[str, set[str]] = defaultdict(set)
    table, columns = None, []
    for line in dump.splitlines():
        header = re.match(r"^COPY (?:\w+\.)?(\w+) \((.*)\) FROM stdin;$", line)
        if header:
            table = header.group(1)
            columns = [c.strip().strip('"') for c in header.group(2).split(",")]
            continue
        if line == "\\.":
            table = None
            continue
        if table is None:
            for word in CANARY.findall(line):
                found[word].add(f"(outside a table) {line[:80]}")
            continue
        for column, value in zip(columns, line.split("\t"), strict=False):
            for word in CANARY.findall(value):
                found[word].add(f"{table}.{column}")
    return found


class RecordingClient(APIClient):
    """An API client that remembers the (method, route) of every write it sends."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.writes: set[tuple[str, str]] = set()

    def request(self, **request):
        if request["REQUEST_METHOD"] not in ("GET", "HEAD", "OPTIONS"):
            self.writes.add((request["REQUEST_METHOD"], route_of(request["PATH_INFO"])))
        return super().request(**request)


# Write routes the dump test does not call, each with its reason. A write route that is in
# neither this list nor the test's calls fails the test, so a new route is handled first.
NOT_CALLED: dict[tuple[str, str], str] = {}


def write_routes() -> set[tuple[str, str]]:
    return {(method, route) for method, route in api_operations() if method not in ("GET", "HEAD", "OPTIONS")}


def ok(response, *codes: int) -> dict:
    assert response.status_code in (codes or (200, 201)), response.content
    return response.json() if response.content else {}


def fill_through_the_api(api: APIClient, c: Canaries) -> str:
    """Every kind of write SAM offers, through HTTP. Returns everything SAM answered."""
    answers: list[str] = []

    def keep(response, *codes: int) -> dict:
        body = ok(response, *codes)
        answers.append(response.content.decode())
        return body

    slug = c.l("slug")
    keep(api.post("/api/v1/spaces/", {
        "slug": slug, "name": c.l("spacename"), "kind": "project",
        "description": f"Space for the {c.t('spacedesc')} team",
        "redaction_allowlist": [c.l("allowlisted")],
    }, format="json"))
    keep(api.patch(f"/api/v1/spaces/{slug}/", {"description": f"Now the {c.t('spacedescedit')} team"},
                   format="json"))

    def memory_body(n: str) -> dict:
        return {
            "space": slug,
            "title": f"Rule about {c.t('memtitle' + n)} handling",
            "content": f"Always run the {c.t('memcontent' + n)} step before the {c.t('memcontentb' + n)} "
                       "backfill, then check the dashboards.",
            "summary": f"Run {c.t('memsummary' + n)} first",
            "canonical_phrases": [f"{c.t('memphrase' + n)} checklist"],
            "tags": [c.l("memtag" + n)],
            "source": {"type": "doc", "ref": f"wiki {c.t('memsourceref' + n)}",
                       "uri": f"https://wiki.example.org/{c.t('memsourceuri' + n)}"},
            "context_window": {"applies_to": [f"{c.t('memapplies' + n)} builds"],
                               "excludes": [f"{c.t('memexcludes' + n)} builds"]},
            "metadata": {"note": c.t("memmetadata" + n)},
            "training_examples": [{"user": f"How do I run {c.t('memexample' + n)}?",
                                   "assistant": "Use the runner."}],
        }

    created = keep(api.post(MEMORIES, memory_body("one"), format="json"))["memory"]
    # No tags given: whatever SAM suggests must not copy the content into plaintext.
    untagged = {k: v for k, v in memory_body("two").items() if k != "tags"}
    keep(api.post(MEMORIES, untagged, format="json"))
    keep(api.post(f"{MEMORIES}bulk/", {"items": [memory_body("three"), memory_body("four")]},
                  format="json"))
    edited = keep(api.patch(f"{MEMORIES}{created['id']}/", {
        "version": 1, "content": f"Use the {c.t('memedit')} flag from now on, always.",
        "context_window": {"applies_to": [c.t("memappliesedit")], "excludes": []},
        "source": {"type": "doc", "ref": c.t("memsourcerefedit"), "uri": f"file:///{c.t('memuriedit')}"},
        "reason": f"because {c.t('editreason')}",
    }, format="json"))["memory"]
    keep(api.post(f"{MEMORIES}{created['id']}/archive/", {"reason": c.t("archivereason")}, format="json"))
    keep(api.post(f"{MEMORIES}{created['id']}/restore/", {"reason": c.t("restorereason")}, format="json"))
    keep(api.get(f"{MEMORIES}{created['id']}/versions/"))
    assert edited["version"] == 2

    keep(api.post(f"/api/v1/spaces/{slug}/restricted-tags/",
                  {"tag": c.l("restrictedtag"), "min_role": "curator"}, format="json"))
    keep(api.post(f"/api/v1/memories/{created['id']}/restrict/",
                  {"restricted_to": "owner", "reason": f"holds {c.t('restrictreason')}"}, format="json"))
    member = UserFactory(username=c.l("membername"))
    keep(api.post(f"/api/v1/spaces/{slug}/members/", {"user": member.username, "role": "viewer"},
                  format="json"))
    Group.objects.create(name=c.l("groupname"))
    keep(api.post(f"/api/v1/spaces/{slug}/members/", {"group": "qzgroupname", "role": "auditor"},
                  format="json"))

    keep(api.post("/api/v1/recall/", {
        "query": f"what about the {c.t('recallquery')} backfill", "spaces": [slug],
        "active_task": f"fixing {c.t('recalltask')}",
        "conversation": [{"speaker": "user", "content": f"we spoke of {c.t('recallturn')}"}],
    }, format="json"))
    keep(api.post("/api/v1/context-packs/", {"query": f"pack for {c.t('packquery')}", "spaces": [slug]},
                  format="json"))

    execution = keep(api.post(EXECUTIONS, {
        "space": slug, "prd_ref": f"docs/prd/{c.l('prdref')}.md", "title": f"Checkout {c.t('prdtitle')}",
        "prd_hash": c.l("prdhash"), "agent_id": c.l("prdagent"),
        "requirements": [{"id": c.l("reqone"), "title": f"Cart {c.t('reqtitleone')}"},
                         {"id": c.l("reqtwo"), "title": f"Pay {c.t('reqtitletwo')}"}],
    }, format="json"))["execution"]
    eid = execution["id"]
    chain = keep(api.post(CHAINS, {"space": slug, "query": f"How to {c.t('chainquery')} payments?",
                                   "agent_id": c.l("chainagent"), "execution": eid}, format="json"))
    keep(api.post(f"{CHAINS}{chain['id']}/thoughts/", {"content": f"Retry {c.t('thoughtone')} only"},
                  format="json"))
    keep(api.post(f"{CHAINS}{chain['id']}/thoughts/", {"content": f"Or {c.t('thoughttwo')} instead",
                                                        "branch_id": c.l("branchid"), "branch_from": 1},
                  format="json"))
    keep(api.post(f"{CHAINS}{chain['id']}/abandon/", {"reason": f"dropped for {c.t('abandonreason')}"},
                  format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/events/", {
        "type": "requirement_started", "requirement_id": "qzreqone",
        "summary": f"Started {c.t('eventsummary')}", "detail": {"note": c.t("eventdetail")},
        "agent_id": c.l("eventagent"), "idempotency_key": c.l("idemkey"),
    }, format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/events/", {"type": "blocker_hit", "requirement_id": "qzreqone",
                                                  "summary": f"Blocked by {c.t('blockersummary')}"},
                  format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/events/", {"type": "blocker_resolved", "requirement_id": "qzreqone",
                                                  "summary": f"Fixed {c.t('resolvedsummary')}"},
                  format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/decisions/", {
        "decision": f"Use {c.t('decision')} money", "reason": f"because {c.t('decisionreason')}",
        "alternatives": [f"floats {c.t('decisionalt')}"], "requirement_id": "qzreqone",
        "agent_id": c.l("decisionagent"),
    }, format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/events/", {
        "type": "requirement_completed", "requirement_id": "qzreqone",
        "summary": f"Done {c.t('completedsummary')}",
    }, format="json"))
    # A second run with a changed title and requirements: the run records what changed.
    keep(api.post(EXECUTIONS, {
        "space": slug, "prd_ref": "docs/prd/qzprdref.md", "title": f"Checkout {c.t('prdtitletwo')}",
        "requirements": [{"id": "qzreqone", "title": f"Cart {c.t('reqtitlechanged')}"}],
    }, format="json"))
    keep(api.post(f"{EXECUTIONS}{eid}/status/", {"status": "completed"}, format="json"))
    keep(api.get(f"{EXECUTIONS}{eid}/"))
    keep(api.get(f"{EXECUTIONS}{eid}/events/"))
    keep(api.get(f"{EXECUTIONS}{eid}/decisions/"))
    keep(api.get(f"{CHAINS}{chain['id']}/"))
    keep(api.get(f"{MEMORIES}?space={slug}&include_restricted=true"))
    keep(api.get(f"/api/v1/spaces/{slug}/"))
    return "\n".join(answers)


def fill_every_other_route(api: APIClient, c: Canaries) -> str:
    """The write routes fill_through_the_api() leaves out: sessions, cards, categories,
    entities, feedback, the graph, the review queue, chat imports, conversations, training,
    merges, deletes. Returns everything SAM answered."""
    answers: list[str] = []

    def keep(response, *codes: int) -> dict:
        body = ok(response, *codes)
        answers.append(response.content.decode())
        return body

    slug = "qzslug"
    Space.objects.filter(slug=slug).update(capture_sources=["jsonl", "claude_code", "chatgpt", "cursor"])
    # A memory whose id the client chose, sent with a retry key: both are labels.
    chosen = keep(api.post(MEMORIES, {
        "space": slug, "id": c.l("memidchosen"), "title": f"Deploy {c.t('chosentitle')} safely",
        "content": f"The {c.t('chosencontent')} deploy needs django-q2 and psycopg pinned first.",
        "training_examples": [{"user": f"How to deploy {c.t('chosenexample')}?", "assistant": "Pin first."}],
    }, format="json", HTTP_IDEMPOTENCY_KEY=c.l("retrykey")))["memory"]
    other = keep(api.post(MEMORIES, {
        "space": slug, "title": f"Deploy {c.t('othertitle')} slowly",
        "content": f"The {c.t('othercontent')} deploy waits for the nightly window.",
    }, format="json"))["memory"]
    third = keep(api.post(MEMORIES, {
        "space": slug, "title": f"Merge {c.t('thirdtitle')} later",
        "content": f"The {c.t('thirdcontent')} step can wait a week.",
    }, format="json"))["memory"]
    keep(api.post("/api/v1/recall/", {"query": "deploy", "spaces": [slug]}, format="json"))
    keep(api.post("/api/v1/prompt-augmentation/", {"space": slug, "message": f"deploy {c.t('augmessage')}"},
                  format="json"))
    keep(api.post(f"{MEMORIES}{chosen['id']}/training/"), 201)
    keep(api.post(f"{MEMORIES}{chosen['id']}/confirm/", {"reason": f"seen {c.t('confirmreason')}"},
                  format="json"))
    keep(api.post(f"{MEMORIES}{chosen['id']}/used/"))
    keep(api.post(f"{MEMORIES}{other['id']}/contradict/", {"reason": f"wrong {c.t('contradictreason')}"},
                  format="json"))
    relation = keep(api.post(f"{MEMORIES}{chosen['id']}/relations/",
                             {"target": other["id"], "relation_type": "RELATES_TO"}, format="json"), 201)
    keep(api.delete(f"/api/v1/relations/{relation['id']}/"), 204)
    keep(api.post(f"{MEMORIES}{chosen['id']}/resolve-conflict/", {"other": other["id"], "keep": "this"},
                  format="json"))
    version = Memory.objects.get(pk=chosen["id"]).version
    keep(api.post(f"{MEMORIES}{chosen['id']}/versions/1/restore/", {"version": version}, format="json"))
    version = Memory.objects.get(pk=chosen["id"]).version
    keep(api.post(f"{MEMORIES}{chosen['id']}/merge/", {"sources": [third["id"]], "version": version},
                  format="json"))
    review = ReviewItem.objects.create(space=Space.objects.get(slug=slug), memory_id=chosen["id"],
                                       kind=ReviewKind.ARCHIVE_SUGGESTION, reason="stale for 90 days")
    keep(api.post(f"/api/v1/review/{review.pk}/resolve/", {"action": "keep"}, format="json"))

    # categories
    keep(api.post(f"/api/v1/spaces/{slug}/categories/", {
        "name": c.l("catname"), "display_name": f"{c.t('catdisplay')} notes",
        "description": f"Everything about {c.t('catdesc')}", "keywords": [c.t("catkeyword"), "deploy"],
    }, format="json"), 201)
    keep(api.patch(f"/api/v1/spaces/{slug}/categories/qzcatname/", {
        "display_name": f"{c.t('catdisplayedit')} notes", "description": f"Now {c.t('catdescedit')}",
        "keywords": [c.t("catkeywordedit"), "deploy"],
    }, format="json"))
    keep(api.post(f"/api/v1/spaces/{slug}/categories/", {"name": c.l("catgone"), "keywords": ["gone"]},
                  format="json"), 201)
    keep(api.delete(f"/api/v1/spaces/{slug}/categories/qzcatgone/"), 204)

    # entities: whichever names SAM read from the memories above
    named = Entity.objects.filter(space__slug=slug).order_by("pk").values_list("pk", flat=True)
    first, second = list(named[:2])
    keep(api.patch(f"/api/v1/entities/{first}/", {"name": f"{c.t('entityname')}-q"}, format="json"))
    keep(api.post(f"/api/v1/entities/{first}/merge/", {"other": second}, format="json"))
    keep(api.delete(f"/api/v1/entities/{first}/"), 204)

    # coding sessions and cards
    session = keep(api.post("/api/v1/sessions/", {
        "space": slug, "key": c.l("sessionkey"), "title": f"Fix {c.t('sessiontitle')}",
        "agent_id": c.l("sessionagent"),
    }, format="json"), 201)["session"]
    keep(api.post(f"/api/v1/sessions/{session['id']}/events/", {"events": [
        {"event_id": c.l("eventid"), "event_type": "command_run", "text": f"pytest {c.t('eventtext')}",
         "data": {"command": f"pytest {c.t('eventcommand')}", "exit_code": 0},
         "topic_tags": [c.t("topictag")], "entities": [f"src/{c.t('evententity')}.py"],
         "task_refs": [c.t("taskref")], "agent_id": c.l("sessioneventagent")},
        {"event_id": c.l("eventidtwo"), "event_type": "decision", "text": f"Use {c.t('decisiontext')}",
         "data": {"decision": f"Use {c.t('sessiondecision')}", "reason": "simpler"}},
    ]}, format="json"), 201)
    keep(api.post(f"/api/v1/sessions/{session['id']}/compile/"))
    card = keep(api.post("/api/v1/cards/", {
        "space": slug, "card_type": "procedure", "session": session["id"], "evidence": ["qzeventid"],
        "claim": f"Run pytest {c.t('cardclaim')} first", "body": f"Because {c.t('cardbody')} breaks.",
        "scope": {"path": f"src/{c.t('cardpath')}.py", "branch": f"feature/{c.t('cardbranch')}"},
    }, format="json"), 201)
    keep(api.post(f"/api/v1/cards/{card['id']}/validations/", {
        "status": "pass", "validator": f"ci {c.t('cardvalidator')}", "note": f"green {c.t('cardnote')}",
    }, format="json"), 201)

    # chat histories: an upload (with a folder in its name) and a conversation posted whole
    line = json.dumps({"conversation_id": c.t("convid"), "role": "user", "time": "2026-01-02T10:00:00Z",
                       "content": f"I prefer the {c.t('uploadsaid')} layout over spaces."})
    upload = SimpleUploadedFile(f"home/{c.t('uploadfolder')}/{c.t('uploadname')}.jsonl", line.encode())
    keep(api.post(f"/api/v1/spaces/{slug}/chat-imports/", {"source": "jsonl", "file": upload},
                  format="multipart"), 202)
    keep(api.post("/api/v1/conversations/", {"space": slug, "conversation_id": c.t("postedconvid"),
                                             "messages": [{"role": "user", "content":
                                                           f"I prefer {c.t('postedsaid')} over tabs."},
                                                          {"role": "assistant", "content": "Noted."}]},
                  format="json"))

    # thinking chains: another, completed, and recalled
    chain = keep(api.post(CHAINS, {"space": slug, "query": f"Why {c.t('chaintwoquery')}?"}, format="json"),
                 201)
    keep(api.post(f"{CHAINS}{chain['id']}/thoughts/", {"content": f"Since {c.t('chaintwothought')}."},
                  format="json"), 201)
    keep(api.post(f"{CHAINS}{chain['id']}/complete/"))
    keep(api.post(f"{CHAINS}recall/", {"query": f"why {c.t('chainrecallquery')}"}, format="json"))

    # a token of the caller's own, issued and revoked: its name is a label
    token = keep(api.post("/api/v1/me/tokens/", {"name": c.l("owntokenname"), "scopes": ["read"]},
                          format="json"), 201)
    keep(api.delete(f"/api/v1/me/tokens/{token['id']}/"), 204)

    # the caller's mode, members and tags removed, a memory deleted
    keep(api.put("/api/v1/me/mode/", {"mode": "assist"}, format="json"))
    keep(api.delete(f"/api/v1/spaces/{slug}/members/user:qzmembername/"), 204)
    keep(api.post(f"/api/v1/spaces/{slug}/restricted-tags/", {"tag": c.l("tagtodrop"), "min_role": "owner"},
                  format="json"))
    keep(api.delete(f"/api/v1/spaces/{slug}/restricted-tags/qztagtodrop/"), 204)
    keep(api.delete(f"{MEMORIES}{other['id']}/"), 204)

    # a user space forgotten, and a project space deleted
    keep(api.post("/api/v1/spaces/", {"slug": c.l("userslug"), "name": c.l("username"), "kind": "user",
                                      "description": f"My {c.t('userdesc')} notes"}, format="json"))
    keep(api.post(MEMORIES, {"space": "qzuserslug", "title": f"Note {c.t('usertitle')}",
                             "content": f"Remember {c.t('usercontent')} on Fridays."}, format="json"))
    keep(api.post("/api/v1/spaces/qzuserslug/forget/"))
    keep(api.post("/api/v1/spaces/", {"slug": c.l("goneslug"), "name": c.l("gonename"), "kind": "project",
                                      "description": f"About {c.t('gonedesc')}"}, format="json"))
    keep(api.delete("/api/v1/spaces/qzgoneslug/"))
    return "\n".join(answers)


# Free text SAM keeps for itself and never shows again, so the API cannot echo it back.
NOT_ECHOED = {"qzrecallquery", "qzrecalltask", "qzrecallturn", "qzpackquery", "qzrestrictreason",
              "qzeditreason", "qzarchivereason", "qzrestorereason", "qzaugmessage", "qzchainrecallquery",
              "qzconfirmreason", "qzcontradictreason",
              # what an upload said, imported by its job after the answer (202)
              "qzconvid", "qzuploadsaid",
              # a folder in an upload's name: Django's upload handling keeps the base name only
              "qzuploadfolder"}


@pytest.mark.django_db(transaction=True)
def test_a_dump_holds_user_text_only_in_the_documented_plaintext_columns():
    # Given an owner (whose account fields and token name are labels) who writes through
    # every write route of the API, every string a canary
    c = Canaries()
    owner = UserFactory(username=c.l("ownername"), first_name=c.l("firstname"), last_name=c.l("lastname"),
                        email=f"{c.l('email')}@example.org")
    api = RecordingClient()
    api.credentials(HTTP_AUTHORIZATION=bearer(owner, name=c.l("tokenname")))
    answers = fill_through_the_api(api, c)
    answers += fill_every_other_route(api, c)
    membership_grant(actor=SYSTEM, space=Space.objects.get(slug="qzslug"), role="viewer",
                     user=UserFactory(username="bystander"))

    # When the database is dumped by another session
    dump = _pg_dump()
    found = canaries_by_column(dump)
    documented = documented_plaintext_columns()

    # Then every write route was called, or is listed with the reason it is not
    routes = write_routes()
    uncalled = sorted(routes - api.writes - set(NOT_CALLED))
    assert not uncalled, f"write routes the dump test neither calls nor lists in NOT_CALLED: {uncalled}"
    stale = sorted(set(NOT_CALLED) - (routes - api.writes))
    assert not stale, f"NOT_CALLED lists routes that are gone or now called: {stale}"
    # ...SAM stored the free text (it answers with it), so its absence below means sealed
    unstored = sorted(w for w in c.text - NOT_ECHOED if w not in answers.lower())
    assert not unstored, f"never echoed back, so perhaps never stored: {unstored}"
    # ...no free text is readable anywhere in the dump
    leaked = {word: sorted(where) for word, where in found.items() if word in c.text}
    assert not leaked, f"free text readable in the dump: {leaked}"
    # ...labels appear only in the columns docs/security.md lists (or keys that refer to them)
    allowed = documented | references_to(documented)
    undocumented = {word: sorted(where - allowed) for word, where in found.items() if where - allowed}
    assert not undocumented, f"user text in columns docs/security.md does not list: {undocumented}"
    # ...and every listed column really holds user text, so the list matches the dump
    seen = set().union(*found.values())
    assert documented <= seen, f"listed in docs/security.md but holding no user text: {documented - seen}"


@pytest.mark.django_db
def test_suggested_tags_are_only_tags_the_space_already_uses():
    # Given a space whose owner tagged one memory `payments` and restricts `salary`
    owner = UserFactory(username="tagger")
    api = client_for(owner)
    ok(api.post("/api/v1/spaces/", {"slug": "ledger", "name": "Ledger", "kind": "project"}, format="json"))
    ok(api.post(MEMORIES, {"space": "ledger", "title": "Payments retry policy", "tags": ["payments"],
                           "content": "Retry failed payments three times with backoff."}, format="json"))
    ok(api.post("/api/v1/spaces/ledger/restricted-tags/", {"tag": "salary", "min_role": "curator"},
                format="json"))

    # When a memory is written without tags, its content naming both and other words
    body = ok(api.post(MEMORIES, {
        "space": "ledger", "title": "Salary payments run monthly",
        "content": "Salary payments go out monthly through the zebrafinch batch; payments retry twice.",
    }, format="json"))

    # Then SAM suggests exactly the space's tags the content names, and no content word
    assert sorted(body["memory"]["tags"]) == ["payments", "salary"]
    assert "tags" in body["suggested_fields"]
    # ...and in a space with no tags yet, none at all
    ok(api.post("/api/v1/spaces/", {"slug": "fresh", "name": "Fresh", "kind": "project"}, format="json"))
    body = ok(api.post(MEMORIES, {"space": "fresh", "title": "Salary payments run monthly",
                                  "content": "Salary payments go out monthly through the zebrafinch batch."},
                       format="json"))
    assert body["memory"]["tags"] == []
    assert "tags" not in body["suggested_fields"]


@pytest.mark.django_db
def test_a_forgotten_space_keeps_its_description_sealed_under_its_new_key():
    # Given a user space with a description, sealed under the space's key
    owner = UserFactory(username="forgetter")
    api = client_for(owner)
    ok(api.post("/api/v1/spaces/", {"slug": "mine", "name": "Mine", "kind": "user",
                                    "description": "Notes for the weekly planning"}, format="json"))
    old_keys = set(DataKey.objects.filter(space__slug="mine").values_list("pk", flat=True))

    # When its owner forgets everything in it (which destroys its keys)
    ok(api.post("/api/v1/spaces/mine/forget/"))

    # Then the space still loads, its description sealed again under a key that lives
    assert ok(api.get("/api/v1/spaces/mine/"))["description"] == "Notes for the weekly planning"
    with connection.cursor() as cursor:
        cursor.execute("SELECT description FROM memories_space WHERE slug = 'mine'")
        key_id = cipher.key_id_of(cursor.fetchone()[0])
    assert key_id not in old_keys
    assert DataKey.objects.filter(pk=key_id).exists()
