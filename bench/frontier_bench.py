"""Frontier benchmark: add / pop / report throughput and Redis bytes per waiting URL.

Workload (issue 2): 200,000 distinct URLs over 1,000 hosts plus 40,000 duplicate adds, added
with ``add_many`` in batches of 100; popped in batches of 100 until empty, every popped URL
reported (90% 200, 5% 404, 5% 500 every time, so those are fetched 1 + failure_threshold times).
Runs against SQLite and Postgres, and the same adds/pops through scrapy-redis' RFPDupeFilter +
PriorityQueue, then prints medians over ``--runs`` and our/their ratios.

    python bench/frontier_bench.py [--runs 3] [--postgres-url postgres://user@127.0.0.1:5432/postgres]

Without ``--postgres-url`` (or BENCH_POSTGRES_URL) the Postgres row is skipped, and says so.
A private redis-server is started on a free loopback port and stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import fresh_postgres_db, start_redis  # noqa: E402

BATCH = 100


def workload(n_urls: int, n_hosts: int, n_dups: int, seed: int = 7) -> list[list[str]]:
    """Add batches: the distinct URLs, shuffled, with batches of duplicates mixed in."""
    rng = random.Random(seed)
    urls = [f"http://host{i % n_hosts}.test/section/{i // n_hosts}/item?id={i}" for i in range(n_urls)]
    rng.shuffle(urls)
    batches: list[list[str]] = []
    dups_left = n_dups
    every = max(1, (n_urls // BATCH) // max(1, n_dups // BATCH))
    for b, start in enumerate(range(0, n_urls, BATCH)):
        batches.append(urls[start : start + BATCH])
        if dups_left and b % every == every - 1:
            take = min(BATCH, dups_left)
            batches.append(rng.sample(urls[: start + BATCH], take))
            dups_left -= take
    return batches


def outcome_for(url: str) -> int:
    """90% 200, 5% 404, 5% 500 (always), decided by the URL so every attempt agrees."""
    bucket = zlib.crc32(url.encode()) % 20
    return 404 if bucket == 0 else 500 if bucket == 1 else 200


def redis_used(client) -> int:
    return int(client.info("memory")["used_memory"])


# -- child: our frontier on one SQL backend ------------------------------------------------


def run_ours(args: argparse.Namespace) -> dict:
    os.environ["DJANGO_SETTINGS_MODULE"] = "console.settings"
    os.environ["DATABASE_URL"] = args.database_url
    os.environ["REDIS_URL"] = args.redis_url
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    from frontier.conf import get_redis
    from frontier.pool import UrlPool

    call_command("migrate", verbosity=0)
    client = get_redis(args.redis_url)
    client.flushdb()
    pool = UrlPool("bench", backoff_base=0.0, failure_threshold=3)
    batches = workload(args.urls, args.hosts, args.dups)

    before = redis_used(client)
    t0 = time.perf_counter()
    added = sum(pool.add_many(batch) for batch in batches)
    add_s = time.perf_counter() - t0
    per_url = (redis_used(client) - before) / max(1, added)
    adds = sum(len(b) for b in batches)

    pop_s = report_s = 0.0
    popped = 0
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        claims = pool.pop(BATCH)
        pop_s += time.perf_counter() - t0
        if not claims:
            break
        popped += len(claims)
        reports = [(c.url, outcome_for(c.url), "") for c in claims]
        t0 = time.perf_counter()
        pool.set_status_many(reports)
        report_s += time.perf_counter() - t0
    stats = pool.stats()
    pool.purge()
    return {
        "added": added,
        "adds": adds,
        "add_per_s": adds / add_s,
        "popped": popped,
        "pop_per_s": popped / pop_s,
        "status_per_s": popped / report_s,
        "redis_bytes_per_waiting_url": per_url,
        "succeeded": stats["succeeded"],
        "failed": stats["failed"],
        "left_waiting": stats["waiting"],
    }


# -- child: scrapy-redis -----------------------------------------------------------------


def run_scrapy_redis(args: argparse.Namespace) -> dict:
    import redis
    from scrapy import Request, Spider
    from scrapy_redis.dupefilter import RFPDupeFilter
    from scrapy_redis.queue import PriorityQueue

    client = redis.Redis.from_url(args.redis_url)
    client.flushdb()
    spider = Spider(name="bench")
    dupefilter = RFPDupeFilter(client, "bench:dupefilter")
    queue = PriorityQueue(client, spider, "bench:requests")
    batches = workload(args.urls, args.hosts, args.dups)
    before = redis_used(client)
    t0 = time.perf_counter()
    added = 0
    for batch in batches:
        for url in batch:
            request = Request(url)
            if not dupefilter.request_seen(request):
                queue.push(request)
                added += 1
    add_s = time.perf_counter() - t0
    per_url = (redis_used(client) - before) / max(1, added)
    t0 = time.perf_counter()
    popped = 0
    while queue.pop() is not None:
        popped += 1
    pop_s = time.perf_counter() - t0
    client.flushdb()
    return {
        "added": added,
        "adds": sum(len(b) for b in batches),
        "add_per_s": sum(len(b) for b in batches) / add_s,
        "popped": popped,
        "pop_per_s": popped / pop_s,
        "redis_bytes_per_waiting_url": per_url,
    }


# -- parent ----------------------------------------------------------------------------------


def child(kind: str, args: argparse.Namespace, database_url: str, redis_url: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--redis-url", redis_url, "--database-url", database_url]
    cmd += ["--urls", str(args.urls), "--hosts", str(args.hosts), "--dups", str(args.dups)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=1_000)
    parser.add_argument("--dups", type=int, default=40_000)
    parser.add_argument("--postgres-url", default=os.environ.get("BENCH_POSTGRES_URL", ""))
    parser.add_argument("--only", default="sqlite,postgres,scrapy-redis", help="comma-separated subset to run")
    parser.add_argument("--child", choices=["ours", "scrapy-redis"])
    parser.add_argument("--redis-url")
    parser.add_argument("--database-url")
    args = parser.parse_args()

    if args.child == "ours":
        print(json.dumps(run_ours(args)))
        return
    if args.child == "scrapy-redis":
        print(json.dumps(run_scrapy_redis(args)))
        return

    affinity = sorted(os.sched_getaffinity(0))
    print(f"CPU placement: bench processes on CPUs {affinity} of {os.cpu_count()}; redis-server unpinned")
    print(f"workload: {args.urls:,} URLs over {args.hosts:,} hosts + {args.dups:,} duplicate adds; batches of {BATCH}")
    workdir = tempfile.mkdtemp(prefix="frontier-bench-")
    redis_proc, redis_url = start_redis(workdir)
    results: dict[str, list[dict]] = {}
    try:
        backends = [("sqlite", f"sqlite:///{workdir}/bench.sqlite3")]
        if args.postgres_url:
            backends.append(("postgres", None))
        else:
            print("postgres: skipped (give --postgres-url or BENCH_POSTGRES_URL)")
        try:
            import scrapy_redis  # noqa: F401

            kinds = [*backends, ("scrapy-redis", "")]
        except ImportError:
            print("scrapy-redis: skipped (pip install -e '.[bench]')")
            kinds = backends
        only = set(args.only.split(","))
        kinds = [(name, url) for name, url in kinds if name in only]
        for run in range(args.runs):
            for name, db_url in kinds:
                if name == "sqlite":
                    for leftover in Path(workdir).glob("bench.sqlite3*"):
                        leftover.unlink()
                if name == "postgres":
                    db_url = fresh_postgres_db(args.postgres_url, "frontier_bench")
                kind = "scrapy-redis" if name == "scrapy-redis" else "ours"
                result = child(kind, args, db_url, redis_url)
                results.setdefault(name, []).append(result)
                print(f"  run {run + 1} {name}: " + ", ".join(f"{k}={v:,.0f}" for k, v in result.items()), flush=True)
    finally:
        redis_proc.terminate()
        redis_proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"\nmedians of {args.runs} run(s):")
    print(f"{'':14}{'add/s':>10}{'pop/s':>10}{'status/s':>10}{'B/waiting URL':>15}")
    for name, runs in results.items():
        status = f"{median(runs, 'status_per_s'):>10,.0f}" if "status_per_s" in runs[0] else f"{'n/a':>10}"
        print(
            f"{name:14}{median(runs, 'add_per_s'):>10,.0f}{median(runs, 'pop_per_s'):>10,.0f}{status}"
            f"{median(runs, 'redis_bytes_per_waiting_url'):>15,.0f}"
        )
    if "scrapy-redis" in results:
        theirs = results["scrapy-redis"]
        for name in ("sqlite", "postgres"):
            if name in results:
                add_ratio = median(results[name], "add_per_s") / median(theirs, "add_per_s")
                pop_ratio = median(results[name], "pop_per_s") / median(theirs, "pop_per_s")
                print(f"ratio {name}/scrapy-redis: add {add_ratio:.1f}x, pop {pop_ratio:.1f}x")


if __name__ == "__main__":
    main()
