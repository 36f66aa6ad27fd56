""""My tokens" (/me/tokens/) in a real browser: Chromium (the system's package, driven by
Selenium through the system's chromedriver) against SAM served by the test's live server.

A person who is not staff issues a token with the keyboard, sees its secret once, uses it
against the REST API, reloads and no longer sees it, revokes it after a confirmation, and
the secret stops working. A screenshot of each screen is saved under
var/screenshots/tokens/ for a person to read.
"""

from __future__ import annotations

import pytest
import requests
from django.conf import settings
from django.core.cache import cache
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import reverse

from governance import tokens
from governance.audit.models import AuditEvent
from governance.models import ApiToken, hash_token
from tests.browser import BROWSER_TESTS, close_live_server_connections, driver_fixture, log_in, screenshot
from tests.factories import SpaceFactory, UserFactory

pytestmark = BROWSER_TESTS
browser = driver_fixture(width=1280, height=1000)


@pytest.fixture
def person(transactional_db, live_server, browser):
    """Alice, not staff: owner of `alpha`, viewer of `beta`, signed in in the browser."""
    cache.clear()
    user = UserFactory(username="page-alice")
    SpaceFactory(slug="alpha", name="Alpha", members={user: "owner"})
    SpaceFactory(slug="beta", name="Beta", members={user: "viewer"})
    browser.set_window_size(1280, 1000)
    log_in(browser, live_server, user)
    yield user
    close_live_server_connections()


def shot(browser, name: str) -> None:
    screenshot(browser, "tokens", name)


def api_status(live_server, secret: str) -> int:
    return requests.get(f"{live_server.url}/api/v1/spaces/", headers={"Authorization": f"Bearer {secret}"},
                        timeout=30).status_code


def test_a_person_issues_a_token_sees_it_once_and_revokes_it(live_server, browser, person):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    page = f"{live_server.url}{reverse('me-tokens')}"
    browser.get(page)
    assert "You have no tokens yet." in browser.page_source
    shot(browser, "empty")

    # Every field has its label; the form is sent with the keyboard (Enter in the name).
    for field in ("id_name", "id_role", "id_expires_at", "id_spaces_0", "id_scopes_0"):
        assert browser.find_elements(By.CSS_SELECTOR, f"label[for='{field}']"), field
    browser.find_element(By.CSS_SELECTOR, "input[name='spaces'][value='alpha']").click()
    Select(browser.find_element(By.ID, "id_role")).select_by_value("contributor")
    name = browser.find_element(By.ID, "id_name")
    name.send_keys("laptop agent")
    name.send_keys(Keys.ENTER)

    secret_box = browser.find_element(By.ID, "token-secret-value")
    secret = secret_box.get_attribute("value")
    assert secret.startswith("sam_")
    token = ApiToken.objects.get(user=person, name="laptop agent")
    assert token.key_hash == hash_token(secret)
    assert [s.slug for s in token.spaces.all()] == ["alpha"]
    assert token.role == "contributor"
    shot(browser, "issued")

    assert api_status(live_server, secret) == 200

    browser.get(page)  # a reload: the secret is gone for good
    assert secret not in browser.page_source
    assert not browser.find_elements(By.ID, "token-secret-value")
    row = browser.find_element(By.ID, f"token-{token.pk}")
    assert "laptop agent" in row.text
    assert "never" not in row.find_element(By.CSS_SELECTOR, "td[data-label='Last used']").text
    shot(browser, "list")

    row.find_element(By.LINK_TEXT, "Revoke…").click()
    assert "stops working at once" in browser.page_source
    shot(browser, "revoke-confirm")
    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value='Revoke']").click()

    assert "it no longer works" in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert "revoked" in browser.find_element(By.ID, f"token-{token.pk}").text
    shot(browser, "revoked")
    assert api_status(live_server, secret) == 401
    assert sorted(AuditEvent.objects.filter(target_type="apitoken", target_id=str(token.pk))
                  .values_list("action", flat=True)) == ["token_issue", "token_revoke"]


def test_a_role_above_her_own_is_refused_on_the_form_and_the_page_reads_on_a_phone(
        live_server, browser, person):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    tokens.api_token_issue(user=person, name="phone agent", scopes=["read"])
    browser.set_window_size(390, 844)
    browser.get(f"{live_server.url}{reverse('me-tokens')}")
    browser.find_element(By.ID, "id_name").send_keys("too high")
    browser.find_element(By.CSS_SELECTOR, "input[name='spaces'][value='beta']").click()
    Select(browser.find_element(By.ID, "id_role")).select_by_value("owner")
    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value='Issue token']").click()

    error = browser.find_element(By.CSS_SELECTOR, "ul.errorlist[role='alert']")
    assert "above your own role in 'beta'" in error.text
    assert not ApiToken.objects.filter(user=person, name="too high").exists()
    # Nothing wider than the phone's screen.
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390 + 1
    shot(browser, "refused-phone")


def test_staff_issue_and_revoke_their_own_token_in_the_admin(live_server, browser, person):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    person.is_staff = True
    person.save(update_fields=["is_staff"])
    browser.get(f"{live_server.url}{reverse('admin:governance_apitoken_add')}")
    browser.find_element(By.ID, "id_name").send_keys("admin agent")
    browser.find_element(By.CSS_SELECTOR, "input[name='scopes'][value='write']").click()  # read only
    Select(browser.find_element(By.ID, "id_role")).select_by_value("viewer")
    shot(browser, "admin-add")
    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value='Issue token']").click()

    secret = browser.find_element(By.ID, "token-secret-value").get_attribute("value")
    token = ApiToken.objects.get(user=person, name="admin agent")
    assert token.key_hash == hash_token(secret)
    assert token.scopes == ["read"]
    shot(browser, "admin-issued")

    browser.get(f"{live_server.url}{reverse('admin:governance_apitoken_changelist')}")
    assert secret not in browser.page_source
    assert "admin agent" in browser.page_source
    browser.find_element(By.CSS_SELECTOR, f"input[name='_selected_action'][value='{token.pk}']").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("revoke_selected")
    browser.find_element(By.NAME, "index").click()
    assert "Revoked 1 token." in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    shot(browser, "admin-list")
    assert api_status(live_server, secret) == 401


def test_someone_signed_out_is_sent_to_sign_in(live_server, db):
    response = Client().get(reverse("me-tokens"))
    assert response.status_code == 302
    assert response["Location"].startswith(resolve_url(settings.LOGIN_URL))
