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

import re
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection
from rest_framework.test import APIClient

from core.models import Space
from governance.access import SYSTEM
from governance.crypto import cipher
from governance.models import DataKey
from governance.services import membership_grant
from tests.factories import UserFactory
from tests.governance.test_encryption import _pg_dump
from tests.personas import client_for

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


# Free text SAM keeps for itself and never shows again, so the API cannot echo it back.
NOT_ECHOED = {"qzrecallquery", "qzrecalltask", "qzrecallturn", "qzpackquery", "qzrestrictreason",
              "qzeditreason", "qzarchivereason", "qzrestorereason"}


@pytest.mark.django_db(transaction=True)
def test_a_dump_holds_user_text_only_in_the_documented_plaintext_columns():
    # Given an owner who fills a space through the API, every string a canary
    owner = UserFactory(username="qzownername")
    c = Canaries()
    c.label.add("qzownername")
    answers = fill_through_the_api(client_for(owner), c)
    membership_grant(actor=SYSTEM, space=Space.objects.get(slug="qzslug"), role="viewer",
                     user=UserFactory(username="bystander"))

    # When the database is dumped by another session
    dump = _pg_dump()
    found = canaries_by_column(dump)
    documented = documented_plaintext_columns()

    # Then SAM stored the free text (it answers with it), so its absence below means sealed
    unstored = sorted(w for w in c.text - NOT_ECHOED if w not in answers.lower())
    assert not unstored, f"never echoed back, so perhaps never stored: {unstored}"
    # ...no free text is readable anywhere in the dump
    leaked = {word: sorted(where) for word, where in found.items() if word in c.text}
    assert not leaked, f"free text readable in the dump: {leaked}"
    # ...labels appear only in the columns docs/security.md lists
    undocumented = {word: sorted(where - documented) for word, where in found.items()
                    if where - documented}
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
