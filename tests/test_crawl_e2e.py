"""End to end: real RQ worker processes crawl the loopback test site; its request log is the judge."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from console import services
from console.models import Hub, Page, Project, ProjectState
from frontier.models import UrlRecord
from tests.site import LoopbackSite

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
CRAWL_DELAY = 0.05
FAILURE_THRESHOLD = 3
MAX_DEPTH = 6
HUB_SPAN = 1.0


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = f"{db['USER']}:{db['PASSWORD']}@" if db["PASSWORD"] else f"{db['USER']}@"
    return f"postgres://{auth}{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def start_workers(count: int, redis_url: str, log_dir: Path) -> list[subprocess.Popen]:
    env = dict(
        os.environ,
        DATABASE_URL=database_url(),
        REDIS_URL=redis_url,
        FRONTIER_BACKOFF_BASE="0.2",
        CRAWL_ROBOTS_RETRY="1",
        CRAWL_MIN_REFRESH_SPAN="1",
        LOG_LEVEL="WARNING",
    )
    env.pop("DJANGO_SETTINGS_MODULE", None)
    workers = []
    for n in range(count):
        log = open(log_dir / f"worker{n}.log", "w")  # noqa: SIM115  (closed with the process)
        workers.append(
            subprocess.Popen(
                [sys.executable, "manage.py", "rqworker", "crawl", "--worker-class", "rq.SimpleWorker"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return workers


def stop_workers(workers: list[subprocess.Popen]) -> list[int | None]:
    alive = [w.poll() for w in workers]
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
    return alive


@pytest.fixture
def site():
    site = LoopbackSite().start()
    yield site
    site.stop()


def make_project(site: LoopbackSite, settings, *, concurrency: int = 1) -> Project:
    settings.CRAWL_MIN_REFRESH_SPAN = HUB_SPAN
    project = Project.objects.create(
        name="e2e",
        seeds="\n".join(site.url(i, "/") for i in range(len(site.hosts))),
        exclude_patterns="/many/",
        max_depth=MAX_DEPTH,
        crawl_delay=CRAWL_DELAY,
        request_timeout=0.5,
        max_page_bytes=256 * 1024,
        failure_threshold=FAILURE_THRESHOLD,
        pending_timeout=60,
        batch_size=20,
        hub_percent=20,
        concurrency=concurrency,
    )
    Hub.objects.create(project=project, url=site.url(0, "/hub"), refresh_span=HUB_SPAN)
    return project


def wait_until_drained(project: Project, site: LoopbackSite, timeout: float = 240) -> None:
    """Until every version of the hub was seen and nothing is waiting or in flight."""
    pool = services.pool_for(project)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if site.hub_fetches > site.hub_versions and pool.empty() and pool.pending_count() == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"crawl did not drain in {timeout} s: {pool.stats()}")


def check_politeness(site: LoopbackSite) -> None:
    for host in site.hosts:
        hits = sorted((h for h in site.hits if h.host == host), key=lambda h: h.start)
        for before, after in itertools.pairwise(hits):
            assert after.start >= before.end, f"two requests in flight to {host}: {before} / {after}"
            gap = after.start - before.end
            # After an aborted response the server notices the hang-up a write or two late.
            slack = 0.01 if before.aborted else 0.0
            assert gap >= CRAWL_DELAY * 0.9 - slack, f"{host}: {gap:.3f} s between {before.path} and {after.path}"


def expected_tree(site: LoopbackSite) -> set[str]:
    paths = {"/", *(f"/p/{i}" for i in range(site.pages)), *(f"/missing/{i}" for i in range(5))}
    paths |= {f"/deep/{k}" for k in range(site.deep) if k + 1 <= MAX_DEPTH}
    return paths


@pytest.mark.parametrize("workers", [1, 2])
def test_crawl_fetches_every_page_once_politely(site, redis_url, settings, tmp_path, workers):
    project = make_project(site, settings, concurrency=workers)
    procs = start_workers(workers, redis_url, tmp_path)
    try:
        services.project_start(project=project)
        wait_until_drained(project, site)
        services.project_stop(project=project)
    finally:
        alive = stop_workers(procs)
    assert alive == [None] * workers, "every worker must survive the crawl: " + "".join(
        (tmp_path / f"worker{n}.log").read_text()[-2000:] for n in range(workers)
    )

    # Every in-scope reachable page exactly once; 404s once; always-500 pages 1 + threshold times.
    for index in range(site.tree_hosts):
        counts = Counter(p for p in site.paths(index) if p not in ("/robots.txt", "/hub"))
        expected = expected_tree(site)
        if index == 0:
            expected |= {"/old/1", "/old/2", "/loop/a", "/loop/b"} | {f"/news/{n}" for n in site.hub_news(99)}
            assert counts.pop("/broken/0") == 1 + FAILURE_THRESHOLD
            assert counts.pop("/broken/1") == 1 + FAILURE_THRESHOLD
        assert set(counts) == expected, f"host {index}: {set(counts) ^ expected}"
        assert set(counts.values()) == {1}, f"host {index}: {[p for p, n in counts.items() if n > 1]}"
    # robots.txt once per host, except the one that answered 503 first (retried after a hold).
    assert site.robots_fetches[site.hosts[1]] == 2
    assert all(site.robots_fetches[h] == 1 for h in site.hosts if h != site.hosts[1])
    # Nothing out of scope, beyond max_depth or disallowed by robots.txt.
    assert not any(h.path.startswith(("/private/", "/many/")) for h in site.hits)
    assert not any(h.host == site.out_of_scope for h in site.hits)
    assert UrlRecord.objects.filter(url__contains="/private/", state="failed", last_error="robots.txt").count() == 2
    check_politeness(site)
    # The hub came back after its refresh span, and its new links were crawled (checked above).
    hub_hits = sorted(h.start for h in site.hits if h.path == "/hub")
    assert len(hub_hits) > site.hub_versions
    assert all(b - a >= HUB_SPAN * 0.9 for a, b in itertools.pairwise(hub_hits))
    hub = Hub.objects.get(project=project)
    assert hub.last_fetched_at is not None

    # Hostile pages: recorded with a clear error, nothing lost.
    hostile = {p.url.rsplit("/", 1)[-1]: p for p in Page.objects.filter(host=site.hostile_host)}
    assert hostile["huge"].error == f"truncated at {256 * 1024} bytes"
    assert hostile["bomb"].error == f"truncated at {256 * 1024} bytes"
    assert hostile["slow"].error.startswith("timeout")
    assert hostile["bad-utf8"].title.startswith("caf")
    assert hostile["binary"].content_type == "application/octet-stream"
    assert hostile["links"].outlinks == 0  # 10,000 links, all excluded by the project's pattern
    assert site.count(len(site.hosts) - 1, "/slow") == 1 + FAILURE_THRESHOLD

    # SQL agrees with the server: one stored page per request the crawler made.
    served = [h for h in site.hits if h.path not in ("/robots.txt",)]
    assert Page.objects.filter(project=project).count() == len(served)
    project.refresh_from_db()
    assert project.state == ProjectState.STOPPED
