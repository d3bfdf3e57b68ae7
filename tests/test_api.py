"""The REST API: who may do what, validation, pagination and filters, export, schema."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from console.models import Hub, Page, Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_jobs(monkeypatch):
    monkeypatch.setattr("console.crawl.jobs.enqueue_batches", lambda *args: None)


@pytest.fixture
def people(db):
    team = Group.objects.create(name="team")
    owner = User.objects.create_user("owner", password="pw-owner-1")
    member = User.objects.create_user("member", password="pw-member-1")
    member.groups.add(team)
    other = User.objects.create_user("other", password="pw-other-1")
    staff = User.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    return {"owner": owner, "member": member, "other": other, "staff": staff, "team": team}


@pytest.fixture
def project(people, redis_url) -> Project:
    project = Project.objects.create(name="shared", owner=people["owner"], seeds="http://a.example/")
    project.shared_with.add(people["team"])
    Hub.objects.create(project=project, url="http://a.example/hub", refresh_span=3600)
    Page.objects.create(project=project, url="http://a.example/", host="a.example", status_code=200,
                        fetched_at=timezone.now())  # fmt: skip
    return project


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


# (method, path, body, status for someone who may see the project)
def endpoints(pk: int) -> list[tuple[str, str, dict | None, int]]:
    base = f"/api/v1/projects/{pk}"
    return [
        ("get", f"{base}/", None, 200),
        ("patch", f"{base}/", {"crawl_delay": 2.5}, 200),
        ("get", f"{base}/stats/", None, 200),
        ("post", f"{base}/seeds/", {"urls": ["http://a.example/new"]}, 200),
        ("get", f"{base}/hubs/", None, 200),
        ("post", f"{base}/hubs/", {"url": "http://a.example/latest", "refresh_span": 600}, 201),
        ("get", f"{base}/rules/", None, 200),
        ("post", f"{base}/rules/", {"field": "title", "kind": "css", "expression": "h1::text"}, 201),
        ("get", f"{base}/pages/", None, 200),
        ("get", f"{base}/urls/", None, 200),
        ("get", f"{base}/export?format=jsonl", None, 200),
        ("post", f"{base}/pause/", None, 409),
    ]


@pytest.mark.parametrize("who", ["anonymous", "owner", "member", "other", "staff"])
def test_auth_matrix_on_every_project_endpoint(people, project, who, no_jobs):
    client = client_for(None if who == "anonymous" else people[who])
    for method, path, body, allowed in endpoints(project.pk):
        response = getattr(client, method)(path, body, format="json")
        expected = {"anonymous": 401, "other": 404}.get(who, allowed)
        assert response.status_code == expected, (who, method, path, response.content[:300])
        if who == "other":
            assert b"shared" not in response.content  # not a byte of its data


@pytest.mark.parametrize(("who", "visible"), [("owner", 1), ("member", 1), ("other", 0), ("staff", 1)])
def test_project_list_shows_only_own_and_shared(people, project, who, visible):
    response = client_for(people[who]).get("/api/v1/projects/")
    assert response.status_code == 200
    assert [p["name"] for p in response.json()] == ["shared"] * visible


def test_anonymous_gets_401_on_lists_schema_and_docs():
    client = APIClient()
    for path in ("/api/v1/projects/", "/api/schema/", "/api/docs/"):
        assert client.get(path).status_code == 401, path


def test_session_authentication_works_too(people, project):
    client = APIClient()
    client.login(username="member", password="pw-member-1")
    assert client.get(f"/api/v1/projects/{project.pk}/").status_code == 200


def test_create_then_start_pause_resume_stop_and_409(people, redis_url, no_jobs):
    client = client_for(people["other"])
    response = client.post("/api/v1/projects/", {"name": "mine", "seeds": "http://m.example/"}, format="json")
    assert response.status_code == 201
    assert response.json()["owner"] == "other"
    pk = response.json()["id"]
    for action, state in (("start", "running"), ("pause", "paused"), ("resume", "running"), ("stop", "stopped")):
        response = client.post(f"/api/v1/projects/{pk}/{action}/")
        assert (response.status_code, response.json()["state"]) == (200, state)
    response = client.post(f"/api/v1/projects/{pk}/start/")
    assert response.status_code == 409
    assert response.json()["detail"] == "cannot start project 'mine': it is stopped (only a new project can)"


def test_delete_purges_the_pool(people, project, no_jobs):
    from frontier.models import UrlRecord

    client = client_for(people["owner"])
    client.post(f"/api/v1/projects/{project.pk}/start/")
    assert UrlRecord.objects.exists()
    assert client_for(people["other"]).delete(f"/api/v1/projects/{project.pk}/").status_code == 404
    assert client.delete(f"/api/v1/projects/{project.pk}/").status_code == 204
    assert not UrlRecord.objects.exists()


def test_validation_errors_are_clear_400s(people, project):
    client = client_for(people["owner"])
    response = client.post(
        "/api/v1/projects/", {"name": "bad name!", "seeds": "mailto:x@example.com", "include_patterns": "("},
        format="json",
    )  # fmt: skip
    assert response.status_code == 400
    errors = response.json()
    assert set(errors) == {"name", "seeds", "include_patterns"}
    assert "unsupported scheme 'mailto'" in errors["seeds"][0]
    response = client.post(f"/api/v1/projects/{project.pk}/hubs/", {"url": "http://a.example/x", "refresh_span": 1})
    assert response.status_code == 400
    assert "Refresh span must be between" in json.dumps(response.json())
    response = client.post(f"/api/v1/projects/{project.pk}/hubs/", {"url": "http://a.example/hub", "refresh_span": 600})
    assert response.json() == {"url": ["This project already has this hub."]}
    response = client.post(
        f"/api/v1/projects/{project.pk}/rules/", {"field": "x", "kind": "xpath", "expression": "//["}
    )
    assert "Invalid XPath expression" in json.dumps(response.json())
    assert client.post(f"/api/v1/projects/{project.pk}/seeds/", {"urls": []}, format="json").status_code == 400
    assert (
        client.post(f"/api/v1/projects/{project.pk}/seeds/", "not json", content_type="application/json").status_code
        == 400
    )
    response = client.get(f"/api/v1/projects/{project.pk}/pages/?fetched_after=yesterday")
    assert response.json() == {"fetched_after": ["Must be an ISO 8601 date-time, e.g. 2026-11-20T10:00:00Z."]}


def test_sharing_only_with_own_groups(people, project):
    other_group = Group.objects.create(name="elsewhere")
    response = client_for(people["member"]).patch(
        f"/api/v1/projects/{project.pk}/", {"shared_with": [other_group.pk]}, format="json"
    )
    assert response.json() == {"shared_with": ["You can only share a project with groups you belong to."]}


def test_seeds_report_each_url(people, project):
    response = client_for(people["owner"]).post(
        f"/api/v1/projects/{project.pk}/seeds/",
        {"urls": ["http://a.example/1", "http://a.example/1#dup", "javascript:void(0)"]},
        format="json",
    )
    assert response.json() == {
        "results": {
            "http://a.example/1": "queued",
            "http://a.example/1#dup": "duplicate",
            "javascript:void(0)": "rejected: unsupported scheme 'javascript'",
        }
    }


def test_oversized_bodies_and_write_throttling(people, project, monkeypatch):
    client = client_for(people["owner"])
    huge = {"urls": ["http://a.example/" + "x" * 1000] * 3000}  # ~3 MB of JSON
    response = client.post(f"/api/v1/projects/{project.pk}/seeds/", huge, format="json")
    assert response.status_code in (400, 413)
    from django.core.cache import cache

    from console.api.views import WriteRateThrottle

    cache.clear()  # throttle history lives in the cache
    monkeypatch.setattr(WriteRateThrottle, "get_rate", lambda self: "2/min")
    codes = [client.patch(f"/api/v1/projects/{project.pk}/", {"max_depth": 4}, format="json").status_code
             for _ in range(3)]  # fmt: skip
    assert codes == [200, 200, 429]
    assert client.get(f"/api/v1/projects/{project.pk}/").status_code == 200  # reads are not throttled


def test_pages_cursor_pagination_and_filters(people, project):
    now = timezone.now()
    Page.objects.all().delete()
    statuses = [200, 301, 404, 500, None]
    Page.objects.bulk_create(
        Page(project=project, url=f"http://{'ab'[i % 2 == 0]}.example/p{i}", host=f"{'ab'[i % 2 == 0]}.example",
             status_code=statuses[i % 5], error="" if statuses[i % 5] else "timeout: read",
             fetched_at=now - timedelta(minutes=i))
        for i in range(25)
    )  # fmt: skip
    client = client_for(people["member"])
    seen, url = [], f"/api/v1/projects/{project.pk}/pages/?page_size=10"
    while url:
        body = client.get(url).json()
        seen += [p["id"] for p in body["results"]]
        url = body["next"]
    assert seen == sorted(seen, reverse=True)
    assert len(seen) == len(set(seen)) == 25
    oldest = client.get(f"/api/v1/projects/{project.pk}/pages/?order=oldest&page_size=5").json()["results"]
    assert [p["id"] for p in oldest] == sorted(seen)[:5]

    def count(**query: str) -> int:
        response = client.get(f"/api/v1/projects/{project.pk}/pages/", {"page_size": 100, **query})
        return len(response.json()["results"])

    assert count(status_class="2xx") == 5
    assert count(status_class="4xx") == 5
    assert count(status_class="error") == 5
    assert count(host="a.example") == 12
    assert count(url="p1") == 11  # p1, p10..p19
    assert count(fetched_after=(now - timedelta(minutes=10, seconds=30)).isoformat()) == 11
    assert count(fetched_before=(now - timedelta(minutes=19, seconds=30)).isoformat()) == 5
    assert client.get(f"/api/v1/projects/{project.pk}/pages/?status_class=7xx").status_code == 400


def test_urls_endpoint_is_the_frontiers_view(people, project, no_jobs):
    client = client_for(people["owner"])
    client.post(f"/api/v1/projects/{project.pk}/start/")
    rows = client.get(f"/api/v1/projects/{project.pk}/urls/").json()["results"]
    assert {(r["url"], r["state"], r["is_hub"]) for r in rows} == {
        ("http://a.example/", "waiting", False),
        ("http://a.example/hub", "waiting", True),
    }
    assert len(client.get(f"/api/v1/projects/{project.pk}/urls/?state=failed").json()["results"]) == 0
    assert client.get(f"/api/v1/projects/{project.pk}/urls/?state=bogus").status_code == 400


def test_stats_match_the_cli_numbers(people, project, no_jobs):
    from console.selectors import project_status

    body = client_for(people["owner"]).get(f"/api/v1/projects/{project.pk}/stats/").json()
    assert body == json.loads(json.dumps(project_status(project=project)))


def _stream(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_export_50000_pages_both_formats_with_resume(people, project):
    Page.objects.all().delete()
    now = timezone.now()
    Page.objects.bulk_create(
        (Page(project=project, url=f"http://a.example/{i}", host="a.example", status_code=200,
              title=f'title, "quoted" {i}\nline', fields={"i": i}, fetched_at=now) for i in range(50_000)),
        batch_size=5000,
    )  # fmt: skip
    ids = list(Page.objects.filter(project=project).order_by("id").values_list("id", flat=True))
    client = client_for(people["owner"])

    response = client.get(f"/api/v1/projects/{project.pk}/export?format=jsonl")
    assert response["Content-Type"] == "application/x-ndjson"
    lines = _stream(response).splitlines()
    rows, trailer = [json.loads(line) for line in lines[:-1]], json.loads(lines[-1])
    assert [r["id"] for r in rows] == ids
    assert trailer == {"cursor": ids[-1]}
    assert response["X-Export-Cursor"] == str(ids[-1])

    response = client.get(f"/api/v1/projects/{project.pk}/export?format=csv")
    parsed = list(csv.reader(io.StringIO(_stream(response))))
    header, body, last = parsed[0], parsed[1:-1], parsed[-1]
    assert header[:3] == ["id", "url", "host"]
    assert [int(r[0]) for r in body] == ids
    assert body[7][header.index("title")] == 'title, "quoted" 7\nline'
    assert json.loads(body[7][header.index("fields")]) == {"i": 7}
    assert last == ["#cursor", str(ids[-1])]

    cursor = ids[29_999]
    rest = _stream(client.get(f"/api/v1/projects/{project.pk}/export?format=jsonl&after={cursor}")).splitlines()
    assert [json.loads(line)["id"] for line in rest[:-1]] == ids[30_000:]
    empty = _stream(client.get(f"/api/v1/projects/{project.pk}/export?format=jsonl&after={ids[-1]}"))
    assert empty == json.dumps({"cursor": ids[-1]}) + "\n"
    assert client.get(f"/api/v1/projects/{project.pk}/export?format=xml").status_code == 400
    assert client.get(f"/api/v1/projects/{project.pk}/export?after=-1").status_code == 400


def test_openapi_schema_and_docs_page(people):
    client = client_for(people["owner"])
    schema = client.get("/api/schema/").json()
    assert schema["openapi"].startswith("3.")
    paths = set(schema["paths"])
    assert {"/api/v1/projects/", "/api/v1/projects/{id}/start/", "/api/v1/projects/{project_pk}/export"} <= paths
    client.force_login(people["owner"])
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/api/v1/projects/{project_pk}/pages/" in html
    assert "cdn" not in html.lower() and "https://" not in html
