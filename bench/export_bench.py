"""Export benchmark: 1,000,000 pages streamed through the HTTP endpoint as JSONL and CSV.

Prints rows/s and the serving process's peak RSS (VmHWM) on SQLite, and on Postgres when given
``--postgres-url`` (an admin URL; a fresh database is made). The server is Django's runserver in
a process of its own, pinned to nothing; the client reads the stream in 1 MB chunks.

    python bench/export_bench.py [--rows 1000000] [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import on_each_database, served_console  # noqa: E402

LOAD = """
import os, json, time
from datetime import datetime, timezone
import django
django.setup()
from django.core.management import call_command
from django.db import connection, transaction
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from console.models import Page, Project
call_command("migrate", verbosity=0)
user = User.objects.create_user("bench", is_staff=True)
print(Token.objects.create(user=user).key)
project = Project.objects.create(name="export-bench", owner=user)
rows = int(os.environ["BENCH_ROWS"])
stamp = connection.ops.adapt_datetimefield_value(datetime.now(timezone.utc))
table = Page._meta.db_table
sql = (f"INSERT INTO {table} (project_id, url, host, status_code, error, content_type, size, elapsed_ms, depth,"
       f" is_hub, title, fields, body_sha1, outlinks, fetched_at) VALUES "
       "(%s, %s, %s, 200, '', 'text/html', 10240, 12, 2, %s, %s, %s, %s, 20, %s)")
with connection.cursor() as cursor:
    for start in range(0, rows, 20000):
        with transaction.atomic():
            cursor.executemany(sql, [
                (project.pk, f"http://host{i % 1000}.test/section/{i // 1000}/item?id={i}", f"host{i % 1000}.test",
                 False, f"Item {i}: a title of moderate length", json.dumps({"price": i % 997, "sku": f"S{i}"}),
                 "%040x" % i, stamp)
                for i in range(start, min(rows, start + 20000))
            ])
print(project.pk)
"""


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_backend(name: str, database_url: str, redis_url: str, rows: int) -> list[str]:
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, DJANGO_SETTINGS_MODULE="console.settings",
               BENCH_ROWS=str(rows), LOG_LEVEL="WARNING", DEBUG="false", PYTHONPATH=str(ROOT))  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", LOAD], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    token, project_id = out.stdout.split()[-2:]
    print(f"{name}: loaded {rows:,} pages in {time.perf_counter() - t0:.0f} s")
    lines = []
    with served_console(env) as (server, port):
        for fmt in ("jsonl", "csv"):
            t0 = time.perf_counter()
            newlines = 0
            with requests.get(
                f"http://127.0.0.1:{port}/api/v1/projects/{project_id}/export",
                params={"format": fmt},
                headers={"Authorization": f"Token {token}"},
                stream=True,
                timeout=600,
            ) as response:
                response.raise_for_status()
                for chunk in response.iter_content(1 << 20):
                    newlines += chunk.count(b"\n")
            seconds = time.perf_counter() - t0
            exported = newlines - 1 - (fmt == "csv")  # less the cursor line (and the CSV header)
            line = (
                f"{name:9} {fmt:6} {exported:>10,} rows in {seconds:6.1f} s = {exported / seconds:>8,.0f} rows/s,"
                f" server peak RSS {peak_rss_mb(server.pid):.0f} MB"
            )
            print(line, flush=True)
            lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--postgres-url", default=os.environ.get("BENCH_POSTGRES_URL", ""))
    args = parser.parse_args()
    print(f"CPU placement: bench and server on CPUs {sorted(os.sched_getaffinity(0))}, unpinned")
    on_each_database(
        "export-bench", args.postgres_url, lambda name, db, redis_url: run_backend(name, db, redis_url, args.rows)
    )


if __name__ == "__main__":
    main()
