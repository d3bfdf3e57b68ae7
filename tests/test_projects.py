"""Projects: the state machine, the CLI, admin validation, and what a crawl run leaves behind."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from console import services
from console.models import ExtractionRule, Hub, Page, Project, ProjectState
from frontier.models import Pool, UrlRecord

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(redis_url) -> Project:
    return Project.objects.create(name="news", seeds="http://a.example/\nhttp://b.example/")


@pytest.fixture
def no_jobs(monkeypatch):
    """Record the job chains a transition would start instead of queueing them."""
    started: list[tuple[int, int, int]] = []
    monkeypatch.setattr("console.crawl.jobs.enqueue_batches", lambda *args: started.append(args))
    return started


def test_legal_transitions(project, no_jobs, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.project_start(project=project)
    assert project.state == ProjectState.RUNNING
    assert no_jobs == [(project.pk, 1, 1, project.request_timeout)]
    assert services.pool_for(project).size() == 2
    services.project_pause(project=project)
    with django_capture_on_commit_callbacks(execute=True):
        services.project_resume(project=project)
    assert no_jobs[-1] == (project.pk, 2, 1, project.request_timeout)  # a new generation: old chains end
    services.project_stop(project=project)
    assert project.state == ProjectState.STOPPED
    assert project.finished_at is not None


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("pause", "cannot pause project 'news': it is new (only a running project can)"),
        ("resume", "cannot resume project 'news': it is new (only a paused project can)"),
        ("stop", "cannot stop project 'news': it is new (only a paused or running project can)"),
    ],
)
def test_illegal_transitions_are_explained(project, action, message):
    with pytest.raises(services.ProjectStateError) as info:
        getattr(services, f"project_{action}")(project=project)
    assert str(info.value) == message


def test_deleting_a_project_purges_its_pool(project, no_jobs):
    services.project_start(project=project)
    assert UrlRecord.objects.count() == 2
    services.project_delete(project=project)
    assert UrlRecord.objects.count() == 0
    assert not Pool.objects.filter(name=project.pool_name).exists()


def test_seeds_report_queued_duplicate_and_rejected(project):
    result = services.project_seeds_add(
        project=project, urls=["http://a.example/", "http://A.example/#x", "mailto:x@example.com"]
    )
    assert result == {
        "http://a.example/": "queued",
        "http://A.example/#x": "duplicate",
        "mailto:x@example.com": "rejected: unsupported scheme 'mailto'",
    }


def test_finished_when_nothing_is_left_and_no_hubs(project, no_jobs):
    from console.crawl.loop import crawl_batch_run

    project.seeds = ""
    project.save()
    services.project_start(project=project)
    outcome = crawl_batch_run(project=project)
    assert outcome.finished_reason == "nothing left to crawl"
    Hub.objects.create(project=project, url="http://a.example/hub", refresh_span=3600)
    assert crawl_batch_run(project=project).finished_reason == ""


def test_page_budget_finishes_the_crawl(project, no_jobs):
    from console.crawl.loop import crawl_batch_run
    from console.crawl.stats import fetched_counter_key

    project.max_pages = 10
    project.save()
    services.project_start(project=project)
    pool = services.pool_for(project)
    pool.redis.set(fetched_counter_key(project), 10)
    assert crawl_batch_run(project=project).finished_reason == "page budget of 10 reached"


# -- the CLI -----------------------------------------------------------------------------


def test_cli_create_status_and_transitions(redis_url, no_jobs, capsys):
    call_command(
        "crawl", "create", "shop", "--seed", "http://shop.example/", "--hub", "http://shop.example/new",
        "--refresh-span", "600", "--max-depth", "3", "--crawl-delay", "0.5", "--ignore-robots", "--concurrency", "2",
    )  # fmt: skip
    project = Project.objects.get(name="shop")
    assert (project.max_depth, project.crawl_delay, project.obey_robots, project.concurrency) == (3, 0.5, False, 2)
    assert project.hubs.get().refresh_span == 600
    call_command("crawl", "start", "shop")
    call_command("crawl", "status", "shop", "--json")
    status = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert status["state"] == "running"
    assert status["waiting"] == 1
    assert status["hubs"] == 1
    with pytest.raises(CommandError, match="cannot resume project 'shop': it is running") as info:
        call_command("crawl", "resume", "shop")
    assert info.value.returncode == 2


def test_cli_refuses_bad_input_with_exit_status_2(redis_url):
    with pytest.raises(CommandError, match="seeds: line 1: Not a crawlable URL: unsupported scheme 'ftp'"):
        call_command("crawl", "create", "x", "--seed", "ftp://x.example/")
    with pytest.raises(CommandError, match="no project named 'nope'"):
        call_command("crawl", "status", "nope")


def test_cli_bad_arguments_print_one_line_and_exit_2():
    done = subprocess.run(
        [sys.executable, "manage.py", "crawl", "create", "x", "--max-depth", "deep"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "REDIS_URL": "redis://127.0.0.1:1/0", "DATABASE_URL": "sqlite:////tmp/x.db"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "invalid int value: 'deep'" in done.stderr


def test_cli_export_jsonl_and_csv_with_resume(project, tmp_path, capsys):
    from django.utils import timezone

    Page.objects.bulk_create(
        Page(project=project, url=f"http://a.example/{i}", host="a.example", status_code=200, title=f"t,{i}",
             fields={"n": i}, fetched_at=timezone.now())
        for i in range(5)
    )  # fmt: skip
    out = tmp_path / "pages.jsonl"
    call_command("crawl", "export", "news", "--format", "jsonl", "--output", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["title"] for r in rows] == [f"t,{i}" for i in range(5)]
    cursor = rows[1]["id"]
    call_command("crawl", "export", "news", "--format", "csv", "--after", str(cursor))
    parsed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["title"] for r in parsed] == ["t,2", "t,3", "t,4"]
    assert json.loads(parsed[0]["fields"]) == {"n": 2}


# -- admin validation --------------------------------------------------------------------


def test_model_validation_names_the_field_and_reason(project, settings):
    from django.core.exceptions import ValidationError

    project.seeds = "http://ok.example/\njavascript:alert(1)"
    project.include_patterns = "(unclosed"
    with pytest.raises(ValidationError) as info:
        project.full_clean()
    assert info.value.message_dict["seeds"] == ["line 2: Not a crawlable URL: unsupported scheme 'javascript'."]
    assert info.value.message_dict["include_patterns"][0].startswith("line 1: invalid regular expression")
    settings.CRAWL_MIN_REFRESH_SPAN = 60
    with pytest.raises(ValidationError, match="Refresh span must be between 60 s and 30 days"):
        Hub(project=project, url="http://a.example/", refresh_span=5).full_clean()
    with pytest.raises(ValidationError, match="Invalid CSS expression"):
        ExtractionRule(project=project, field="x", kind="css", expression="p[[").full_clean()
    with pytest.raises(ValidationError, match="Invalid XPath expression"):
        ExtractionRule(project=project, field="x", kind="xpath", expression="//p[").full_clean()


def test_admin_add_project_with_inlines_and_start_action(admin_client, redis_url, no_jobs):
    data = {
        "name": "admin-made",
        "seeds": "http://a.example/",
        "max_depth": 3,
        "crawl_delay": 1,
        "max_in_flight_per_host": 1,
        "obey_robots": "on",
        "user_agent": "ua",
        "request_timeout": 10,
        "max_page_bytes": 100000,
        "failure_threshold": 3,
        "pending_timeout": 300,
        "batch_size": 50,
        "hub_percent": 20,
        "order": "fifo",
        "concurrency": 1,
        "hubs-TOTAL_FORMS": 2,
        "hubs-INITIAL_FORMS": 0,
        "hubs-0-url": "http://a.example/news",
        "hubs-0-refresh_span": 600,
        "hubs-0-enabled": "on",
        "hubs-1-url": "http://a.example/latest",
        "hubs-1-refresh_span": 900,
        "hubs-1-enabled": "on",
        "rules-TOTAL_FORMS": 1,
        "rules-INITIAL_FORMS": 0,
        "rules-0-field": "headline",
        "rules-0-kind": "css",
        "rules-0-expression": "h1::text",
    }
    response = admin_client.post("/admin/console/project/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    project = Project.objects.get(name="admin-made")
    assert project.hubs.count() == 2
    assert project.rules.get().field == "headline"
    response = admin_client.post(
        "/admin/console/project/", {"action": "start_projects", "_selected_action": [project.pk]}, follow=True
    )
    assert "Admin-made: running" in response.content.decode()  # the admin capitalises messages
    response = admin_client.post(
        "/admin/console/project/", {"action": "start_projects", "_selected_action": [project.pk]}, follow=True
    )
    assert "Cannot start project &#x27;admin-made&#x27;: it is running" in response.content.decode()


def test_admin_shows_field_errors(admin_client, redis_url):
    response = admin_client.post("/admin/console/project/add/", {"name": "bad", "seeds": "mailto:x@example.com"})
    assert response.status_code == 200
    assert "Not a crawlable URL: unsupported scheme" in response.content.decode()


def test_dead_job_chains_are_revived_once(project, capsys, django_capture_on_commit_callbacks):
    import django_rq

    from console.crawl.jobs import heartbeat_key

    project.concurrency = 2
    project.save()
    with pytest.raises(services.ProjectStateError, match="it is new"):
        services.project_revive_chains(project=project)
    project.state, project.run_generation = ProjectState.RUNNING, 1
    project.save()
    queue = django_rq.get_queue("crawl")
    with django_capture_on_commit_callbacks(execute=True):  # django_rq enqueues after the commit
        assert services.project_revive_chains(project=project) == 2  # no heartbeat at all: both slots
        assert services.project_revive_chains(project=project) == 0  # heartbeats now live
        queue.connection.delete(heartbeat_key(project.pk, 1))  # slot 1's worker died
        call_command("crawl", "kick", "news")
    assert "news: 1 job chain(s) restarted" in capsys.readouterr().out
    assert [job.args for job in queue.get_jobs()] == [(project.pk, 1, 0), (project.pk, 1, 1), (project.pk, 1, 1)]
