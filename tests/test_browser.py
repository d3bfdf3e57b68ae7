"""In a real browser (Debian's Chromium driven by Playwright) against live_server and a real worker."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from console.models import Project
from tests.site import LoopbackSite
from tests.test_crawl_e2e import start_workers, stop_workers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
TIMEOUT_MS = 30_000


@pytest.fixture
def browser_page():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (./scripts/test installs it)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        yield page
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def small_site():
    site = LoopbackSite(hosts=2, pages=40, deep=3, hub_versions=2).start()
    yield site
    site.stop()


def counter(page, name: str) -> int:
    text = page.locator(f'[data-counter="{name}"]').inner_text().replace(",", "")
    return int(text) if text.isdigit() else 0  # a dash until the first refresh


def test_operator_journey(live_server, redis_url, settings, small_site, tmp_path, browser_page):
    # browser_page comes last so it closes first, while the server still has its test settings.
    page, site = browser_page, small_site
    settings.CRAWL_MIN_REFRESH_SPAN = 1
    User.objects.create_superuser("boss", "boss@example.com", "pw-boss-123")
    ARTIFACTS.mkdir(exist_ok=True)

    # Log in.
    page.goto(f"{live_server.url}/console/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "pw-boss-123")
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(r"/console/$"))

    # Create a project with two hubs and a rule through the admin.
    page.goto(f"{live_server.url}/admin/console/project/add/")
    page.fill("#id_name", "browser")
    page.fill("#id_seeds", "\n".join(site.url(i, "/") for i in range(3)))
    page.fill("#id_crawl_delay", "0.2")
    page.fill("#id_request_timeout", "1")
    page.fill("#id_failure_threshold", "1")
    page.fill("#id_hubs-0-url", site.url(0, "/hub"))
    page.fill("#id_hubs-0-refresh_span", "2")
    page.click("#hubs-group .add-row a")
    page.fill("#id_hubs-1-url", site.url(1, "/hub"))
    page.fill("#id_hubs-1-refresh_span", "3")
    page.fill("#id_rules-0-field", "heading")
    page.fill("#id_rules-0-expression", "title::text")
    page.click("input[name=_save]")
    page.wait_for_selector("text=was added successfully")
    project = Project.objects.get(name="browser")
    assert project.hubs.count() == 2
    assert project.rules.count() == 1

    workers = start_workers(1, redis_url, tmp_path)
    try:
        # Start it from the project list.
        page.goto(f"{live_server.url}/console/")
        row = page.locator("tr", has_text="browser")
        row.locator("button", has_text="Start").click()
        page.wait_for_selector("text=browser is running.")

        # Watch the counters rise without reloading: a marker set now would vanish on a reload.
        row.locator("a", has_text="browser").click()
        page.wait_for_selector('[data-counter="succeeded"]')
        page.evaluate("window.__noReload = true")
        start = counter(page, "succeeded")
        succeeded = "Number(document.querySelector('[data-counter=\"succeeded\"]').textContent.replace(/,/g, ''))"
        page.wait_for_function(f"() => {succeeded} > {start + 5}")
        assert page.evaluate("window.__noReload") is True
        page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

        # The host table: rows, sorting and search.
        page.wait_for_selector("#hosts tbody tr td:has-text('127.0.0.11')")
        page.click("#hosts th button[data-sort=host]")
        page.fill("#host-search", "127.0.0.12")
        page.wait_for_function("() => document.querySelectorAll('#hosts tbody tr').length === 1")
        page.fill("#host-search", "")
        page.wait_for_function("() => document.querySelectorAll('#hosts tbody tr').length >= 3")
        page.locator("#hosts").screenshot(path=str(ARTIFACTS / "host-table.png"))

        # The failure matrix (the site has 404s and always-500 pages), then requeue. The report is a
        # plain page: look again until the first failures are counted.
        page.wait_for_function("() => Number(document.querySelector('[data-counter=\"failed\"]').textContent) > 0")
        page.click("text=Failure report")
        for _ in range(40):
            if page.locator("#matrix tbody a").count():
                break
            page.wait_for_timeout(500)
            page.reload()
        assert page.locator("#matrix tbody a").count() >= 1
        assert page.locator("#matrix th", has_text="404/410").count() == 1
        page.click("text=Requeue every failed URL")
        page.wait_for_selector("text=failed URL(s) queued again.")

        # Every host cools down: the dashboard says why nothing moves.
        Project.objects.filter(pk=project.pk).update(crawl_delay=600)
        page.goto(f"{live_server.url}/console/projects/{project.pk}/")
        page.wait_for_selector("#why:has-text('All hosts are cooling down')", timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "dashboard-cooling.png"), full_page=True)

        # A narrow screen: nothing sticks out sideways (wide tables scroll inside their box).
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(300)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.screenshot(path=str(ARTIFACTS / "dashboard-narrow.png"), full_page=True)
    finally:
        Project.objects.filter(pk=project.pk).update(state="stopped")
        stop_workers(workers)
