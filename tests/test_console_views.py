"""The operator console's pages and actions, through Django's test client."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User

from console import services
from console.crawl.stats import outcome_class, record_outcomes
from console.models import Hub, Page, Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_jobs(monkeypatch):
    monkeypatch.setattr("console.crawl.jobs.enqueue_batches", lambda *args: None)


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_user("operator", password="pw-operator-1")


@pytest.fixture
def project(operator, redis_url, no_jobs) -> Project:
    project = Project.objects.create(
        name="news", owner=operator, seeds="http://a.example/\nhttp://b.example/", crawl_delay=0
    )
    Hub.objects.create(project=project, url="http://a.example/hub", refresh_span=600)
    services.project_start(project=project)
    return project


@pytest.fixture
def client_in(client, operator):
    client.force_login(operator)
    return client


def crawl_some(project: Project) -> None:
    """What the loop would do for a few fetches: frontier reports plus live counters."""
    pool = services.pool_for(project)
    pool.add_many([f"http://c.example/{i}" for i in range(5)])
    outcomes = []
    for _ in range(10):
        claims = pool.pop(10)
        if not claims:
            break
        for claim in claims:
            status = 404 if claim.url.endswith("/3") else 200
            pool.set_status(claim.url, status)
            outcomes.append((claim.host, status, "", 120))
    outcomes += [("c.example", None, "timeout: read", 1500), ("b.example", 503, "", 40)]
    record_outcomes(pool.redis, project.pool_name, outcomes, time.time())


PAGES = [
    "/console/",
    "/console/projects/{pk}/",
    "/console/projects/{pk}/dashboard.json",
    "/console/projects/{pk}/hosts.json",
    "/console/projects/{pk}/failures/",
    "/console/projects/{pk}/failures/c.example/timeout/",
    "/console/projects/{pk}/inspect/",
]


def test_every_page_sends_anonymous_users_to_log_in(client, project):
    for page in PAGES:
        response = client.get(page.format(pk=project.pk))
        assert response.status_code == 302, page
        assert response["Location"].startswith("/admin/login/"), page


def test_actions_are_post_only(client_in, project):
    for action in ("pause", "stop"):
        assert client_in.get(f"/console/projects/{project.pk}/{action}").status_code == 405
    assert client_in.get(f"/console/projects/{project.pk}/failures/requeue").status_code == 405
    hub = project.hubs.get()
    assert client_in.get(f"/console/projects/{project.pk}/hubs/{hub.pk}/span").status_code == 405


def test_pages_render_for_the_operator(client_in, project):
    crawl_some(project)
    for page in PAGES:
        assert client_in.get(page.format(pk=project.pk)).status_code == 200, page


def test_another_users_project_is_a_404(client, project):
    stranger = User.objects.create_user("stranger", password="pw-stranger-1")
    client.force_login(stranger)
    for page in PAGES[1:]:
        assert client.get(page.format(pk=project.pk)).status_code == 404, page
    assert b"news" not in client.get("/console/").content


def test_project_list_and_actions_redirect_with_messages(client_in, project):
    page = client_in.get("/console/").content.decode()
    assert "news" in page
    assert "running" in page
    response = client_in.post(f"/console/projects/{project.pk}/pause", {"next": "/console/"}, follow=True)
    assert "news is paused." in response.content.decode()
    response = client_in.post(f"/console/projects/{project.pk}/pause", follow=True)
    assert (
        "cannot pause project &#x27;news&#x27;: it is paused (only a running project can)" in response.content.decode()
    )


def test_why_line_when_the_job_chains_died(client_in, project, monkeypatch, django_capture_on_commit_callbacks):
    from console import dashboard

    monkeypatch.setattr(
        dashboard, "workers_info", lambda project: {"workers": [{"name": "w"}], "queued": 0, "failed": 0}
    )
    why = client_in.get(f"/console/projects/{project.pk}/dashboard.json").json()["why"]
    assert why.startswith("Its batch jobs are gone")
    with django_capture_on_commit_callbacks(execute=True):
        response = client_in.post(f"/console/projects/{project.pk}/revive", follow=True)
    assert "1 batch job chain(s) of news restarted." in response.content.decode()


def test_dashboard_json_counters_charts_hubs_workers_and_why(client_in, project):
    crawl_some(project)
    data = client_in.get(f"/console/projects/{project.pk}/dashboard.json").json()
    counters = data["counters"]
    assert counters["succeeded"] == 6  # 2 seeds + 4 of c.example
    assert counters["failed"] == 1
    assert data["state"] == "running"
    assert data["throughput_svg"].startswith("<svg")
    assert "404/410" in data["status_svg"]
    assert [h["url"] for h in data["hubs"]] == ["http://a.example/hub"]
    assert data["hubs"][0]["next_due_at"] is not None
    assert data["workers"] == {"workers": [], "queued": 0, "failed": 0}
    assert data["why"] == "No worker is running: start one with `manage.py rqworker crawl`."


def test_why_line_when_all_hosts_cool_down(client_in, project, monkeypatch):
    from console import dashboard

    monkeypatch.setattr(
        dashboard, "workers_info", lambda project: {"workers": [{"name": "w"}], "queued": 1, "failed": 0}
    )
    import django_rq

    from console.crawl.jobs import heartbeat_key

    django_rq.get_queue("crawl").connection.set(heartbeat_key(project.pk, 0), 1)  # its chain is alive
    project.crawl_delay = 600
    project.save()
    pool = services.pool_for(project)
    pool.add_many(["http://a.example/2", "http://b.example/2"])
    for claim in pool.pop(10):
        if not claim.is_hub:
            pool.set_status(claim.url, 200)
    # The hub is still leased; once it is reported too, both hosts wait out the crawl delay.
    pool.set_status("http://a.example/hub", 200)
    why = client_in.get(f"/console/projects/{project.pk}/dashboard.json").json()["why"]
    assert why.startswith("All hosts are cooling down (crawl delay); the next in ")


def test_host_table_sorts_searches_and_paginates(client_in, project):
    pool = services.pool_for(project)
    pool.add_many([f"http://h{i:03d}.example/{j}" for i in range(120) for j in range(i % 4)])
    record_outcomes(pool.redis, project.pool_name, [("h007.example", 200, "", 50), ("h007.example", 500, "", 150)],
                    time.time())  # fmt: skip
    url = f"/console/projects/{project.pk}/hosts.json"
    first = client_in.get(url, {"sort": "host", "dir": "asc"}).json()
    assert first["total"] == 2 + 90  # a and b (seeds), and the 90 h-hosts with work
    assert first["pages"] == 2
    assert [r["host"] for r in first["rows"][:2]] == ["a.example", "b.example"]
    second = client_in.get(url, {"sort": "host", "dir": "asc", "page": 2}).json()
    assert len(second["rows"]) == 92 - 50
    found = client_in.get(url, {"q": "h007"}).json()["rows"]
    assert found == [{"host": "h007.example", "waiting": 3, "inflight": 0, "succeeded": 1, "failed": 1,
                      "retrying": 0, "last": "500", "latency_ms": 100, "next_at": None, "next_reason": ""}]  # fmt: skip
    waiting = [r["waiting"] for r in client_in.get(url, {"sort": "waiting"}).json()["rows"]]
    assert waiting == sorted(waiting, reverse=True)
    assert waiting[0] == 3
    ascending = [r["waiting"] for r in client_in.get(url, {"sort": "waiting", "dir": "asc"}).json()["rows"]]
    assert ascending == sorted(ascending)


def test_failure_matrix_drill_down_and_requeue(client_in, project):
    crawl_some(project)
    page = client_in.get(f"/console/projects/{project.pk}/failures/").content.decode()
    assert "c.example" in page
    assert "404/410" in page
    drill = client_in.get(f"/console/projects/{project.pk}/failures/c.example/404/410/").content.decode()
    assert "http://c.example/3" in drill
    response = client_in.post(f"/console/projects/{project.pk}/failures/c.example/404/410/", follow=True)
    assert "1 URL(s) of c.example (404/410) queued again." in response.content.decode()
    assert services.pool_for(project).state("http://c.example/3") == "waiting"


def test_hub_span_edit_in_place(client_in, project, settings):
    settings.CRAWL_MIN_REFRESH_SPAN = 60
    hub = project.hubs.get()
    url = f"/console/projects/{project.pk}/hubs/{hub.pk}/span"
    ok = client_in.post(url, {"refresh_span": "900"}, HTTP_ACCEPT="application/json")
    assert ok.json() == {"refresh_span": 900.0}
    bad = client_in.post(url, {"refresh_span": "5"}, HTTP_ACCEPT="application/json")
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("Refresh span must be between 60 s and 30 days")
    nan = client_in.post(url, {"refresh_span": "soon"}, follow=True)
    assert "Refresh span must be a number of seconds" in nan.content.decode()
    hub.refresh_from_db()
    assert hub.refresh_span == 900


def test_url_inspector_shows_state_fetches_and_requeues(client_in, project):
    from django.utils import timezone

    pool = services.pool_for(project)
    popped = [c.url for _ in range(3) for c in pool.pop(10) if pool.set_status(c.url, 200)]
    assert "http://a.example/" in popped
    Page.objects.create(project=project, url="http://a.example/", host="a.example", status_code=200, title="Home",
                        fetched_at=timezone.now())  # fmt: skip
    page = client_in.get(f"/console/projects/{project.pk}/inspect/", {"url": "HTTP://A.example/#top"}).content.decode()
    assert '<dd id="url-state">succeeded</dd>' in page
    assert "Home" in page
    response = client_in.post(f"/console/projects/{project.pk}/inspect/", {"url": "http://a.example/"}, follow=True)
    assert "http://a.example/ queued again." in response.content.decode()
    assert pool.state("http://a.example/") == "waiting"
    unknown = client_in.get(f"/console/projects/{project.pk}/inspect/", {"url": "http://zzz.example/"})
    assert "never seen this URL" in unknown.content.decode()


@pytest.mark.parametrize(
    ("status", "error", "cls"),
    [(200, "", "2xx"), (301, "", "3xx"), (404, "", "404/410"), (410, "", "404/410"), (403, "", "4xx"),
     (429, "", "429"), (503, "", "5xx"), (None, "timeout: read", "timeout"), (None, "dns: lookup failed", "dns"),
     (None, "connection refused", "refused"), (None, "robots.txt", "robots"), (None, "broken response: X", "error")],
)  # fmt: skip
def test_outcome_classes(status, error, cls):
    assert outcome_class(status, error) == cls


def test_server_rendered_times_use_the_operators_time_zone(client_in, project):
    from datetime import UTC, datetime

    Page.objects.create(project=project, url="http://a.example/", host="a.example", status_code=200,
                        fetched_at=datetime(2026, 1, 15, 12, 0, tzinfo=UTC))  # fmt: skip
    url = f"/console/projects/{project.pk}/inspect/"
    client_in.cookies["tz"] = "Asia/Tokyo"
    assert "9 p.m." in client_in.get(url, {"url": "http://a.example/"}).content.decode()  # 12:00 UTC = 21:00 JST
    client_in.cookies["tz"] = "Not/AZone"
    assert "noon" in client_in.get(url, {"url": "http://a.example/"}).content.decode()  # falls back to UTC
