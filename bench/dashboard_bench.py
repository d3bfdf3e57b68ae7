"""Dashboard benchmark: the live JSON endpoint and the host table on a big synthetic project.

1,000,000 URLs over 10,000 hosts (40% still waiting, scheduled in Redis by ``rebuild``),
200,000 stored pages, per-host live counters for every host. Times ``dashboard.json`` and the
host table (``hosts.json``, sorted by waiting, first page) over HTTP against runserver, and prints
p50 / p95 on SQLite and, with ``--postgres-url``, on Postgres.

    python bench/dashboard_bench.py [--urls 1000000] [--hosts 10000] [--pages 200000] [--requests 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import on_each_database, served_console  # noqa: E402

LOAD = """
import os, json, time, random
from datetime import datetime, timezone
import django
django.setup()
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from django.db import connection, transaction
from console.crawl.stats import record_outcomes
from console.models import Page, Project
from console.services import pool_for
from frontier.canonical import fingerprint_of
from frontier.models import Pool, UrlRecord

call_command("migrate", verbosity=0)
n_urls, n_hosts, n_pages = (int(os.environ[k]) for k in ("BENCH_URLS", "BENCH_HOSTS", "BENCH_PAGES"))
user = User.objects.create_superuser("bench", "bench@example.com", "x")
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(session.session_key)
project = Project.objects.create(name="dash-bench", owner=user, state="running")
pool = pool_for(project)
pool_id = pool.pool_id
stamp = connection.ops.adapt_datetimefield_value(datetime.now(timezone.utc))
rng = random.Random(5)
states = ["waiting"] * 4 + ["succeeded"] * 5 + ["failed"]
url_sql = (f"INSERT INTO {UrlRecord._meta.db_table} (pool_id, fingerprint, url, host, depth, priority, state,"
           " attempts, last_status, last_error, is_hub, discovered_at, updated_at)"
           " VALUES (%s, %s, %s, %s, 1, 0, %s, 1, %s, '', %s, %s, %s)")
with connection.cursor() as cursor:
    for start in range(0, n_urls, 20000):
        rows = []
        for i in range(start, min(n_urls, start + 20000)):
            url = f"http://host{i % n_hosts}.test/item/{i}"
            state = states[i % 10]
            status = None if state == "waiting" else (200 if state == "succeeded" else 404)
            host = f"host{i % n_hosts}.test"
            rows.append((pool_id, fingerprint_of(url), url, host, state, status, False, stamp, stamp))
        with transaction.atomic():
            cursor.executemany(url_sql, rows)
    page_sql = (f"INSERT INTO {Page._meta.db_table} (project_id, url, host, status_code, error, content_type, size,"
                " elapsed_ms, depth, is_hub, title, fields, body_sha1, outlinks, fetched_at)"
                " VALUES (%s, %s, %s, 200, '', 'text/html', 10000, 20, 1, %s, 't', '{}', '', 10, %s)")
    for start in range(0, n_pages, 20000):
        with transaction.atomic():
            cursor.executemany(page_sql, [(project.pk, f"http://host{i % n_hosts}.test/item/{i}",
                                           f"host{i % n_hosts}.test", False, stamp)
                                          for i in range(start, min(n_pages, start + 20000))])
scheduled = pool.rebuild()
outcomes = [(f"host{h}.test", rng.choice([200, 200, 200, 404, 500, None]), "timeout: read", rng.randrange(5, 900))
            for h in range(n_hosts) for _ in range(3)]
record_outcomes(pool.redis, project.pool_name, outcomes, time.time())
print(project.pk)
print(scheduled)
"""


def run_backend(name: str, database_url: str, redis_url: str, args: argparse.Namespace) -> None:
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, DJANGO_SETTINGS_MODULE="console.settings",
               BENCH_URLS=str(args.urls), BENCH_HOSTS=str(args.hosts), BENCH_PAGES=str(args.pages),
               LOG_LEVEL="WARNING", DEBUG="false", PYTHONPATH=str(ROOT), SECRET_KEY="bench-secret")  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", LOAD], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    session, project_id, scheduled = out.stdout.split()[-3:]
    print(f"{name}: loaded {args.urls:,} URLs ({int(scheduled):,} waiting), {args.pages:,} pages in "
          f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    http = requests.Session()
    http.cookies.set("sessionid", session)
    with served_console(env) as (_, port):
        base = f"http://127.0.0.1:{port}/console/projects/{project_id}"
        for label, url in (("dashboard.json", f"{base}/dashboard.json"),
                           ("host table", f"{base}/hosts.json?sort=waiting&dir=desc&page=1")):  # fmt: skip
            http.get(url, timeout=30).raise_for_status()  # warm-up
            times = []
            for _ in range(args.requests):
                t0 = time.perf_counter()
                response = http.get(url, timeout=30)
                times.append((time.perf_counter() - t0) * 1000)
                response.raise_for_status()
            times.sort()
            p95 = times[max(0, int(len(times) * 0.95) - 1)]
            print(f"{name:9} {label:15} p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms"
                  f"  ({args.requests} requests)", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--postgres-url", default=os.environ.get("BENCH_POSTGRES_URL", ""))
    args = parser.parse_args()
    print(f"CPU placement: bench and server on CPUs {sorted(os.sched_getaffinity(0))}, unpinned")
    on_each_database(
        "dashboard-bench", args.postgres_url, lambda name, db, redis_url: run_backend(name, db, redis_url, args)
    )


if __name__ == "__main__":
    main()
