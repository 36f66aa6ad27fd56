"""The admin in words a curator reads, and API docs that need no internet, through the test client.

The browser walk with screenshots is tests/test_admin_screens_browser.py; these pin the text.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.urls import reverse

from governance.access import SYSTEM
from governance.services import membership_grant
from memories import services
from memories.lifecycle import feedback
from memories.models import ReviewItem
from tests.factories import UserFactory, make_memory
from tests.personas import client_for

# Python's spelling of values, which no page should show a person.
REPRS = re.compile(r"(?<![\w-])(None|True|False)(?![\w-])|\{'|\['")


def _visible_text(html: str) -> str:
    """The page's text without its tags, scripts and styles."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def curator(client, space):
    user = UserFactory(username="maria", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["core", "memories", "governance", "audit", "prd", "retrieval"]))
    membership_grant(actor=SYSTEM, space=space, user=user, role="curator")
    client.force_login(user)
    return user


@pytest.fixture
def recalled(curator, space, on_commit):
    """A memory made by SAM, edited by the curator and returned by the curator's recall."""
    with on_commit():
        memory = make_memory(space, title="Release day", content="We release on Tuesdays.")
    services.memory_update(actor=curator, memory_id=memory.id, expected_version=1,
                           changes={"content": "We release on Thursdays."}, reason="moved release day")
    answer = client_for(curator).post("/api/v1/recall/", {"query": "which day do we release",
                                                          "spaces": [space.slug]}, format="json")
    assert [item["id"] for item in answer.json()["data"]["ranked_memory_list"]] == [memory.id]
    return memory


def test_the_index_carries_sams_name_and_puts_the_review_queue_and_memories_first(client, curator):
    page = client.get(reverse("admin:index"))
    html = page.content.decode()

    assert "SAM — Semantic Anchor Memory" in html
    assert "Django administration" not in html
    apps = page.context["app_list"]
    assert [app["app_label"] for app in apps][:2] == ["memories", "core"]
    assert [model["name"] for model in apps[0]["models"]][:2] == ["Review queue", "Memories"]
    assert [app["app_label"] for app in apps][-1] == "audit"  # a curator sees no users or jobs
    assert "Formed memories" in html
    assert "Formed memorys" not in html


def test_a_timeline_row_of_a_recall_says_what_was_asked_and_why_it_was_returned(client, recalled):
    page = client.get(reverse("admin:memories_memory_timeline", args=[quote(recalled.id)]))
    text = _visible_text(page.content.decode())

    assert "Audit timeline: Release day" in text
    assert "Asked “which day do we release”" in text
    assert "returned at rank 1" in text
    assert "rank rank" not in text
    assert "title : Release day" in text  # the create lists what it set
    assert "We release on Tuesdays. → We release on Thursdays." in text
    assert not REPRS.search(text), REPRS.search(text)


def test_a_memorys_page_is_headed_by_its_title_and_its_versions_say_who(client, recalled):
    page = client.get(reverse("admin:memories_memory_change", args=[quote(recalled.id)]))
    html = page.content.decode()
    history = _visible_text(html[html.index('id="version-history"'):])

    assert "<h1>Release day</h1>" in html
    assert re.search(r'<input type="text" name="title" value="Release day"[^>]*id="id_title"', html)
    assert "v2 (current)" in history
    assert "maria moved release day" in history
    assert "system" in history
    assert not REPRS.search(history), REPRS.search(history)


def test_a_review_item_shows_its_evidence_in_words_and_explains_each_action(client, curator, space):
    memory = make_memory(space, title="Deploy day", content="We deploy on Fridays.")
    feedback.memory_contradict(actor=SYSTEM, memory_id=memory.id, reason="we stopped in May")
    item = ReviewItem.objects.get(kind="contested")

    page = client.get(reverse("admin:memories_reviewitem_change", args=[item.pk]))
    text = _visible_text(page.content.decode())

    assert "Contested in webshop" in text
    assert "Status: open." in text
    assert "Confidence before:" in text
    for action in feedback.RESOLUTIONS[item.kind]:
        assert re.search(rf"{action.capitalize()} \w+", text), action
    assert "its confidence goes back to 0.75" in text
    assert "Close this item and change nothing." in text
    assert not REPRS.search(text), REPRS.search(text)


def test_the_memory_list_shows_few_columns_in_words(client, curator, space):
    make_memory(space, title="Money as Decimal", kind="project_fact")

    text = _visible_text(client.get(reverse("admin:memories_memory_changelist")).content.decode())

    assert "project fact" in text
    assert "active, embedding pending" in text


def test_the_api_docs_load_only_sams_own_static_files(client):
    html = client.get("/api/docs/").content.decode()

    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) >= 3
    assert all(url.startswith("/static/drf_spectacular_sidecar/") for url in assets), assets
    assert "cdn" not in html.lower()
    assert "http://" not in html
    assert "https://" not in html
    for url in assets:
        assert client.get(url).status_code == 200, url
