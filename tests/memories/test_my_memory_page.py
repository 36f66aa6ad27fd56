"""The My memory page through Django's test client: sign-in, what each view shows, and the
edges of who may do what (another person's memory is a 404, the anonymous are sent to sign
in, CSRF is checked). The flows in a real browser: test_my_memory_browser.py."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from core.models import SpaceKind
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.models import UserMemorySettings
from memories import services
from memories.models import ChatImport, Memory
from tests.factories import SpaceFactory, UserFactory, make_memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dana():
    return UserFactory(username="dana")


@pytest.fixture
def personal(dana):
    """Dana's personal space, which she owns."""
    return SpaceFactory(slug="dana", name="Dana (personal)", kind=SpaceKind.USER, members={dana: "owner"})


@pytest.fixture
def team(dana):
    """A project space where Dana contributes and Eve curates."""
    eve = UserFactory(username="eve")
    return SpaceFactory(slug="team", name="Team", members={dana: "contributor", eve: "curator"})


@pytest.fixture
def browser_of(dana) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(dana)
    return client


def written_by(user, space, **fields) -> Memory:
    data = {"space": space.slug, "title": "Prefers short answers",
            "content": "Dana prefers short, concrete answers with code first.", "kind": "preference",
            **fields}
    return services.memory_create(actor=user, data=data).instance


# --- signing in ---------------------------------------------------------------------------------

def test_the_anonymous_are_sent_to_sign_in_from_every_page(client, personal):
    memory = make_memory(personal, title="Lives in Lisbon", kind="fact")
    for url in ("/me/", f"/me/memories/{memory.id}/edit/", f"/me/memories/{memory.id}/delete/", "/me/modes/",
                "/me/export/", "/me/export/download/", "/me/forget/", "/me/imports/"):
        answer = client.get(url)
        assert answer.status_code == 302, url
        assert answer["Location"] == f"/sign-in/?next={url}", url
    assert client.post(f"/me/memories/{memory.id}/delete/")["Location"].startswith("/sign-in/")
    assert Memory.objects.filter(pk=memory.id).exists()


def test_a_user_who_is_not_staff_signs_in_and_lands_on_their_page(dana):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/sign-in/")
    assert page.status_code == 200
    assert b'<label for="id_username">' in page.content

    answer = client.post("/sign-in/", {"username": "dana", "password": "pw-for-tests",
                                       "csrfmiddlewaretoken": page.context["csrf_token"]})

    assert answer.status_code == 302
    assert answer["Location"] == "/me/"
    assert client.get("/me/").status_code == 200


def test_a_wrong_password_is_refused_on_the_sign_in_page(client, dana):
    answer = client.post("/sign-in/", {"username": "dana", "password": "nope"})

    assert answer.status_code == 200
    assert b"errornote" in answer.content
    assert "_auth_user_id" not in client.session


def test_the_front_door_sends_each_visitor_to_their_home(client, dana):
    assert client.get("/")["Location"] == "/sign-in/?next=/"
    client.force_login(dana)
    assert client.get("/")["Location"] == "/me/"
    client.force_login(UserFactory(username="staffer", is_staff=True))
    assert client.get("/")["Location"] == "/admin/"


def test_signing_out_takes_a_post_with_csrf(dana):
    client = Client(enforce_csrf_checks=True)
    client.force_login(dana)
    assert client.post("/sign-out/").status_code == 403
    page = client.get("/me/")
    answer = client.post("/sign-out/", {"csrfmiddlewaretoken": page.context["csrf_token"]})
    assert answer["Location"] == "/sign-in/"
    assert client.get("/me/").status_code == 302


# --- what SAM knows about me ---------------------------------------------------------------------

def test_the_page_shows_my_memories_by_kind_group_with_provenance_and_no_one_elses(
        browser_of, dana, personal, team):
    lisbon = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact",
                         source={"type": "import", "ref": "chatgpt:conversations.json#c1:0"})
    mine = written_by(dana, team)
    theirs = make_memory(team, title="Deploys on Tuesdays", content="The team deploys on Tuesdays.")

    page = browser_of.get("/me/")

    text = page.content.decode()
    assert page.status_code == 200
    assert "Facts (1)" in text
    assert "Preferences (1)" in text
    assert lisbon.title in text
    assert "chatgpt:conversations.json#c1:0" in text
    assert mine.title in text
    assert "Written by</dt><dd>dana" in text
    assert theirs.title not in text
    facts = browser_of.get("/me/?kind_group=fact").content.decode()
    assert lisbon.title in facts
    assert mine.title not in facts
    assert browser_of.get("/me/?kind_group=nonsense").status_code == 404


def test_the_nav_links_my_tokens_only_when_that_page_exists(browser_of):
    from django.urls import NoReverseMatch, reverse

    text = browser_of.get("/me/").content.decode()
    try:
        tokens = reverse("me-tokens")
    except NoReverseMatch:
        assert "My tokens" not in text
    else:
        assert f'href="{tokens}"' in text


# --- correcting and deleting ---------------------------------------------------------------------

def test_a_correction_is_saved_as_a_new_version_through_the_service(browser_of, dana, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")

    answer = browser_of.post(f"/me/memories/{memory.id}/edit/", {
        "version": 1, "title": "Lives in Porto", "content": "The user lives in Porto since May.",
        "summary": "", "tags": "home, city", "reason": "moved"})

    assert answer.status_code == 302
    memory.refresh_from_db()
    assert (memory.version, memory.title, memory.tags) == (2, "Lives in Porto", ["home", "city"])
    assert AuditEvent.objects.filter(action="edit", target_id=memory.id).exists()
    history = browser_of.get(answer["Location"]).content.decode()
    assert "Saved as version 2." in history
    assert "moved" in history
    assert "Lives in Lisbon" in history


def test_a_stale_correction_is_refused_and_says_the_current_version(browser_of, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"title": "Lives abroad"})

    answer = browser_of.post(f"/me/memories/{memory.id}/edit/", {
        "version": 1, "title": "Lives in Porto", "content": "The user lives in Porto.", "summary": "",
        "tags": ""})

    assert answer.status_code == 400
    assert "version 2 now" in answer.content.decode()
    memory.refresh_from_db()
    assert memory.title == "Lives abroad"


def test_a_correction_with_bad_fields_says_which(browser_of, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")

    answer = browser_of.post(f"/me/memories/{memory.id}/edit/", {
        "version": 1, "title": "x", "content": "short", "summary": "", "tags": ""})

    assert answer.status_code == 400
    assert 'class="errorlist"' in answer.content.decode()
    memory.refresh_from_db()
    assert memory.version == 1


def test_another_persons_memory_is_not_found_to_edit_or_delete(browser_of, team):
    # In a space Dana reads, and in one she does not even see: both simply do not exist here.
    theirs = make_memory(team, title="Deploys on Tuesdays", content="The team deploys on Tuesdays.")
    hidden = make_memory(SpaceFactory(slug="hidden"), title="Secret plan",
                         content="Nobody else may read this.")

    for memory in (theirs, hidden):
        for url in (f"/me/memories/{memory.id}/edit/", f"/me/memories/{memory.id}/delete/"):
            assert browser_of.get(url).status_code == 404
            assert browser_of.post(url, {"version": 1, "title": "Mine now", "content": "Overwritten by dana.",
                                         "summary": "", "tags": ""}).status_code == 404
        memory.refresh_from_db()
        assert memory.version == 1
    assert browser_of.get("/me/memories/no-such-id/edit/").status_code == 404


def test_deleting_asks_first_and_then_deletes_for_good(browser_of, dana, team):
    mine = written_by(dana, team)

    confirm = browser_of.get(f"/me/memories/{mine.id}/delete/")
    assert confirm.status_code == 200
    assert "Delete for good" in confirm.content.decode()
    assert Memory.objects.filter(pk=mine.id).exists()

    answer = browser_of.post(f"/me/memories/{mine.id}/delete/")

    assert answer["Location"] == "/me/"
    assert not Memory.objects.filter(pk=mine.id).exists()
    assert AuditEvent.objects.filter(action="delete", target_id=mine.id).exists()


def test_writes_refuse_a_post_without_the_csrf_token(dana, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    client = Client(enforce_csrf_checks=True)
    client.force_login(dana)

    assert client.post(f"/me/memories/{memory.id}/delete/").status_code == 403
    assert client.post("/me/forget/", {"confirm": "on"}).status_code == 403
    assert client.post("/me/modes/mine/", {"me-mode": "paused"}).status_code == 403
    assert Memory.objects.filter(pk=memory.id).exists()
    assert not UserMemorySettings.objects.filter(user=dana).exists()


# --- modes -----------------------------------------------------------------------------------------

def test_my_own_mode_and_a_space_i_own_are_set_through_governance(browser_of, dana, personal, team):
    page = browser_of.get("/me/modes/").content.decode()
    assert 'action="/me/modes/spaces/dana/"' in page
    assert 'action="/me/modes/spaces/team/"' not in page  # a contributor does not set a space's mode

    browser_of.post("/me/modes/mine/", {"me-mode": "paused"})
    browser_of.post("/me/modes/spaces/dana/", {"dana-mode": "incognito"})

    assert UserMemorySettings.objects.get(user=dana).mode == "paused"
    personal.refresh_from_db()
    assert personal.mode == "incognito"
    assert AuditEvent.objects.filter(action="mode_change", space_slug="dana").exists()


def test_a_space_i_may_not_manage_keeps_its_mode(browser_of, team, personal):
    assert browser_of.post("/me/modes/spaces/team/", {"team-mode": "off"}).status_code == 403
    assert browser_of.post("/me/modes/spaces/hidden/", {"hidden-mode": "off"}).status_code == 404
    assert browser_of.post("/me/modes/spaces/team/", {"team-mode": "sideways"})["Location"] == "/me/modes/"
    team.refresh_from_db()
    assert team.mode == "assist"


# --- export and forget -----------------------------------------------------------------------------

def test_the_export_downloads_what_sam_knows_about_me_as_jsonl(browser_of, dana, personal, team):
    lisbon = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    mine = written_by(dana, team)
    make_memory(team, title="Deploys on Tuesdays", content="The team deploys on Tuesdays.")

    answer = browser_of.get("/me/export/download/")

    assert answer["Content-Disposition"] == 'attachment; filename="sam-about-me.jsonl"'
    rows = [json.loads(line) for line in b"".join(answer.streaming_content).decode().splitlines()]
    assert sorted(row["id"] for row in rows) == sorted([lisbon.id, mine.id])
    assert AuditEvent.objects.filter(action="export", space_slug="dana").exists()


def test_forgetting_needs_the_confirmation_then_empties_my_spaces(browser_of, dana, personal, team):
    lisbon = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    mine = written_by(dana, team)
    theirs = make_memory(team, title="Deploys on Tuesdays", content="The team deploys on Tuesdays.")

    preview = browser_of.get("/me/forget/").content.decode()
    assert "1 memory, its versions" in preview
    assert "1 memory you wrote in shared spaces" in preview
    refused = browser_of.post("/me/forget/", {})
    assert refused.status_code == 400
    assert Memory.objects.filter(pk=lisbon.id).exists()

    done = browser_of.post("/me/forget/", {"confirm": "on", "written_elsewhere": "on"})

    assert done.status_code == 200
    assert "receipt" in done.content.decode().lower()
    assert not Memory.objects.filter(pk__in=[lisbon.id, mine.id]).exists()
    assert Memory.objects.filter(pk=theirs.id).exists()
    assert AuditEvent.objects.filter(action="forget", space_slug="dana").exists()
    assert "SAM knows nothing about you yet" in browser_of.get("/me/").content.decode()


def test_forgetting_without_the_shared_box_leaves_what_i_wrote_there(browser_of, dana, personal, team):
    mine = written_by(dana, team)

    browser_of.post("/me/forget/", {"confirm": "on"})

    assert Memory.objects.filter(pk=mine.id).exists()


# --- imports ---------------------------------------------------------------------------------------

def upload(client: Client, **fields):
    history = json.dumps({"conversation_id": "c1", "role": "user", "content": "I speak German."}).encode()
    return client.post("/me/imports/", {"space": "dana", "source": "jsonl",
                                        "file": SimpleUploadedFile("history.jsonl", history), **fields})


def test_an_upload_is_imported_and_its_report_shown(browser_of, personal, on_commit):
    with on_commit():
        answer = upload(browser_of, allow_source="on")

    chat_import = ChatImport.objects.get()
    assert answer["Location"] == f"/me/imports/{chat_import.pk}/"
    report = browser_of.get(answer["Location"]).content.decode()
    assert "Memories created</th><td>1" in report
    listing = browser_of.get("/me/imports/").content.decode()
    assert "history.jsonl" in listing
    assert f"/me/imports/{chat_import.pk}/" in listing
    assert "The user speaks German." in browser_of.get("/me/").content.decode()


def test_an_upload_to_a_space_that_does_not_accept_the_source_says_so(browser_of, personal):
    answer = upload(browser_of)

    assert answer.status_code == 400
    assert "does not accept imports from jsonl" in answer.content.decode()
    assert not ChatImport.objects.exists()


def test_someone_elses_import_is_not_found(browser_of, team):
    eve = UserFactory(username="eve")
    team.capture_sources = ["jsonl"]
    team.save()
    from memories.capture import jobs

    theirs = jobs.chat_import_create(actor=eve, space_slug="team", source="jsonl",
                                     upload=SimpleUploadedFile("eve.jsonl", b"{}\n"))

    assert browser_of.get(f"/me/imports/{theirs.pk}/").status_code == 404
    assert "eve.jsonl" not in browser_of.get("/me/imports/").content.decode()


# --- memory modes on the page's writes ---------------------------------------------------------------

def test_in_incognito_a_correction_and_a_delete_are_answered_and_not_kept(browser_of, dana, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    browser_of.post("/me/modes/mine/", {"me-mode": "incognito"})

    edited = browser_of.post(f"/me/memories/{memory.id}/edit/", {
        "version": 1, "title": "Lives in Porto", "content": "The user lives in Porto.", "summary": "",
        "tags": ""}, follow=True)
    deleted = browser_of.post(f"/me/memories/{memory.id}/delete/", follow=True)

    assert "Incognito: SAM answered the correction but kept nothing." in edited.content.decode()
    assert "was not deleted" in deleted.content.decode()
    memory.refresh_from_db()
    assert (memory.version, memory.title) == (1, "Lives in Lisbon")


def test_a_paused_space_refuses_a_delete_and_says_why(browser_of, personal):
    memory = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    browser_of.post("/me/modes/spaces/dana/", {"dana-mode": "paused"})

    answer = browser_of.post(f"/me/memories/{memory.id}/delete/", follow=True)

    assert "Space &#x27;dana&#x27; is paused" in answer.content.decode()
    assert Memory.objects.filter(pk=memory.id).exists()


def test_an_upload_to_a_space_i_only_contribute_to_cannot_allow_the_source(browser_of, team):
    said = b'{"conversation_id": "c1", "role": "user", "content": "Hi."}\n'
    history = SimpleUploadedFile("history.jsonl", said)

    answer = browser_of.post("/me/imports/", {"space": "team", "source": "jsonl", "file": history,
                                              "allow_source": "on"})

    assert answer.status_code == 400
    assert "You may not manage in space &#x27;team&#x27;." in answer.content.decode()
    team.refresh_from_db()
    assert team.capture_sources == []
    assert not ChatImport.objects.exists()


def test_the_page_reads_in_the_same_number_of_queries_however_many_memories(browser_of, dana, personal):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert browser_of.get("/me/").status_code == 200
            assert browser_of.get("/me/?kind_group=fact").status_code == 200
        return len(captured)

    written_by(dana, personal, title="Prefers tea", content="Dana prefers green tea in the morning.")
    make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    few = queries()
    for n in range(6):
        written_by(dana, personal, title=f"Fact number {n}", content=f"Dana knows fact number {n} well.",
                   kind="fact")
    assert queries() == few
