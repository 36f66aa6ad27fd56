"""The screens a curator uses, in Chromium, each saved as a screenshot to be read by a person.

One browser for the module (tests/browser.py); it can reach only the live server, so the API
docs are shown to render with no network. The screenshots land in var/screenshots/admin/.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.urls import reverse

from governance.access import SYSTEM
from governance.services import membership_grant
from memories import services
from memories.models import Memory, ReviewItem
from tests.browser import (
    BROWSER_TESTS,
    close_live_server_connections,
    driver_fixture,
    log_in,
    screenshot,
    wait_for,
)
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.personas import client_for

pytestmark = BROWSER_TESTS
browser = driver_fixture()

# Python's way of writing values, which a person should never read on a page.
REPRS = ("None", "True", "False", "{'", "['")


@pytest.fixture
def workday(transactional_db, live_server, browser, on_commit):
    """A curator of `webshop` signed in, with a space's worth of memories: one edited, one
    recalled, a contradiction waiting in the review queue, and names for the entities list."""
    cache.clear()
    user = UserFactory(username="maria", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["core", "memories", "governance", "audit", "prd", "retrieval"]))
    space = SpaceFactory(slug="webshop", name="Webshop")
    membership_grant(actor=SYSTEM, space=space, user=user, role="curator")
    with on_commit():  # embedded inline, so recall finds them and the write checks compare them
        release = make_memory(space, title="Release day", tags=["process"],
                              content="We release on Tuesdays after the Stripe webhook tests pass.")
        make_memory(space, title="Use MudSnackbar for save confirmations", kind="standard",
                    content="After a form saves, confirm with a short MudSnackbar message in the Blazor UI.")
        make_memory(space, kind="gotcha", title="Test `test_partial_refund` failed (AssertionError 10.00 != "
                    "9.99); it passed again after rounding with Decimal",
                    content="Refund amounts are rounded with Decimal.quantize, never float arithmetic.")
        make_memory(space, title="Create Postgres indexes concurrently in migrations", kind="solution",
                    content="Use AddIndexConcurrently in a migration with atomic = False for big tables.")
        make_memory(space, title="Indentation", content="The user prefers tabs for indentation.",
                    kind="preference", tags=["style"])
    with on_commit():
        make_memory(space, title="Indentation now", content="The user prefers spaces for indentation.",
                    kind="preference", tags=["editor"])
    services.memory_update(
        actor=user, memory_id=release.id, expected_version=1, reason="moved release day",
        changes={"content": "We release on Thursdays after the Stripe webhook tests pass."})
    recalled = client_for(user).post(
        "/api/v1/recall/", {"query": "which day do we release", "spaces": ["webshop"]}, format="json")
    assert recalled.status_code == 200, recalled.content
    log_in(browser, live_server, user)
    yield {"release": Memory.objects.get(pk=release.pk),
           "contradiction": ReviewItem.objects.get(kind="contradiction")}
    close_live_server_connections()


def _text(browser) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, "content").text


def _assert_no_reprs(text: str) -> None:
    for word in REPRS:
        assert f" {word}" not in f" {text}".replace("\n", " "), f"{word!r} on the page:\n{text}"


def test_a_curators_day_reads_in_words_screen_by_screen(live_server, browser, workday):
    from selenium.webdriver.common.by import By

    url = live_server.url
    release, item = workday["release"], workday["contradiction"]

    # The index: SAM's name, and the review queue and memories above the fold.
    browser.get(f"{url}/admin/")
    assert "SAM" in browser.find_element(By.ID, "site-name").text
    assert "Django" not in browser.title + browser.find_element(By.ID, "header").text
    queue = browser.find_element(By.LINK_TEXT, "Review queue")
    memories = browser.find_element(By.CSS_SELECTOR, "#content-main a[href$='/admin/memories/memory/']")
    fold = browser.execute_script("return window.innerHeight")
    assert queue.location["y"] < fold
    assert memories.location["y"] < fold
    screenshot(browser, "admin", "index")

    # The memory list fits the screen: nothing scrolls sideways, the page nor the table.
    browser.get(f"{url}{reverse('admin:memories_memory_changelist')}")
    wait_for(browser, "#result_list")
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert browser.execute_script(
        "const r = document.querySelector('#changelist .results'); return r.scrollWidth <= r.clientWidth")
    assert "Release day" in browser.find_element(By.ID, "result_list").text
    screenshot(browser, "admin", "memory-list")

    # A memory's page: headed by its title; the title is one line; versions say who and what.
    browser.get(f"{url}{reverse('admin:memories_memory_change', args=[quote(release.pk)])}")
    assert browser.find_element(By.CSS_SELECTOR, "#content h1").text == "Release day"
    assert browser.find_element(By.ID, "id_title").tag_name == "input"
    history = browser.find_element(By.ID, "version-history")
    rows = history.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert "maria" in rows[0].text
    assert "moved release day" in rows[0].text
    assert "system" in rows[1].text
    assert "title: Release day" in rows[1].text
    _assert_no_reprs(history.text)
    screenshot(browser, "admin", "memory-change")
    screenshot(browser, "admin", "version-history", element=history)

    # Its audit timeline: the recall says what was asked, the create what it set.
    browser.find_element(By.ID, "timeline-link").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#audit-timeline tbody tr")
    assert [row.get_attribute("class") for row in rows] == [
        "timeline-recall", "timeline-edit", "timeline-create"]
    assert "which day do we release" in rows[0].text
    assert "rank 1" in rows[0].text
    assert "rank rank" not in rows[0].text
    assert "moved release day" in rows[1].text
    _assert_no_reprs(_text(browser))
    screenshot(browser, "admin", "timeline")

    # The review queue, and an item of it: evidence and state in words, each action explained.
    browser.get(f"{url}{reverse('admin:memories_reviewitem_changelist')}")
    assert "Review queue" in browser.find_element(By.CSS_SELECTOR, "#content h1").text
    screenshot(browser, "admin", "review-queue")
    browser.find_element(By.LINK_TEXT, "Contradiction").click()
    assert "SAM is certain: no" in browser.find_element(By.ID, "review-evidence").text
    headers = browser.find_element(By.CSS_SELECTOR, "#side-by-side thead").text
    assert item.memory_id in headers
    assert item.other_id in headers
    actions = browser.find_element(By.ID, "review-actions").find_elements(By.TAG_NAME, "li")
    assert [li.find_element(By.TAG_NAME, "button").text for li in actions] == [
        "Supersede", "Merge", "Keep", "Reject", "Dismiss"]
    assert all(len(li.text.split("\n", 1)[-1]) > 20 for li in actions)
    _assert_no_reprs(_text(browser))
    screenshot(browser, "admin", "review-item")

    # Entities: names, not code.
    browser.get(f"{url}{reverse('admin:memories_entity_changelist')}")
    names = browser.find_element(By.ID, "result_list").text
    assert "MudSnackbar" in names
    assert "AddIndexConcurrently" in names
    assert "False" not in names.split()
    screenshot(browser, "admin", "entities")


def test_the_api_docs_render_with_no_network(live_server, browser, transactional_db):
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server.url}/api/docs/")
    wait_for(browser, ".swagger-ui .opblock", timeout=20)
    operations = browser.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock")
    assert len(operations) > 20
    assert "/api/v1/recall/" in browser.find_element(By.CSS_SELECTOR, ".swagger-ui").text
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded
    assert all(name.startswith(live_server.url) for name in loaded), loaded
    screenshot(browser, "admin", "api-docs")
