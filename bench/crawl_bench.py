"""Crawl benchmark: our RQ workers (1 and 2) against Scrapy on the same static site, in pages/s.

The site: 20 hosts (127.0.0.31 … .50) x 500 pages of ~10 KB with ~20 links each, plus links to
missing pages (404s), served by Debian's nginx from a temp dir on a free port. Crawl delay 0, one
request in flight per host, robots.txt off, on SQLite and a private redis-server.

    python bench/crawl_bench.py [--runs 3] [--hosts 20] [--pages 500]

Scrapy (an optional bench dependency: pip install -e '.[bench]') runs in one process with
CONCURRENT_REQUESTS_PER_DOMAIN=1, DOWNLOAD_DELAY=0 and items written as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import free_port, start_redis  # noqa: E402

FIRST_HOST = 31


def host_address(h: int) -> str:
    return f"127.0.0.{FIRST_HOST + h}"


def write_site(root: Path, hosts: int, pages: int, port: int) -> None:
    """Static pages: page i links to ~20 pages of its host, one other host's root and a 404."""
    rng = random.Random(3)
    filler = "<p>" + ("The quick brown fox jumps over the lazy dog. " * 20) + "</p>"
    for h in range(hosts):
        base = root / f"h{h}"
        (base / "p").mkdir(parents=True)
        for i in range(pages):
            targets = {(i * 7 + k * 13) % pages for k in range(1, 20)} | {(i + 1) % pages}
            links = [f"/p/{t}.html" for t in sorted(targets)]
            links.append(f"http://{host_address(rng.randrange(hosts))}:{port}/p/0.html")
            links.append(f"/missing/{i % 10}.html")
            body = "".join(f'<li><a href="{link}">link {n}</a></li>' for n, link in enumerate(links))
            html = f"<html><head><title>host {h} page {i}</title></head><body><ul>{body}</ul>{filler * 4}</body></html>"
            (base / "p" / f"{i}.html").write_text(html)
        (base / "index.html").write_text('<html><body><a href="/p/0.html">start</a></body></html>')


def start_nginx(workdir: Path, hosts: int, port: int) -> subprocess.Popen:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        sys.exit("nginx not found: apt-get install nginx-light")
    servers = "\n".join(
        f"server {{ listen {host_address(h)}:{port}; root {workdir}/site/h{h}; access_log off; }}" for h in range(hosts)
    )
    conf = workdir / "nginx.conf"
    conf.write_text(
        textwrap.dedent(f"""
        worker_processes 1;
        daemon off;
        pid {workdir}/nginx.pid;
        error_log {workdir}/nginx-error.log;
        events {{ worker_connections 1024; }}
        http {{
            client_body_temp_path {workdir}/tmp; proxy_temp_path {workdir}/tmp;
            fastcgi_temp_path {workdir}/tmp; uwsgi_temp_path {workdir}/tmp; scgi_temp_path {workdir}/tmp;
            default_type text/html;
            keepalive_timeout 30;
        """)
        + servers
        + "\n}\n"
    )
    (workdir / "tmp").mkdir()
    proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(workdir)])
    time.sleep(0.5)
    if proc.poll() is not None:
        sys.exit(f"nginx failed to start: {(workdir / 'nginx-error.log').read_text()}")
    return proc


def crawl_ours(workers: int, redis_url: str, workdir: Path, hosts: int, port: int) -> dict:
    db = workdir / f"crawl-{workers}.sqlite3"
    for old in workdir.glob(f"{db.name}*"):
        old.unlink()  # every run starts from an empty database
    env = dict(
        os.environ,
        DATABASE_URL=f"sqlite:///{db}",
        REDIS_URL=redis_url,
        DJANGO_SETTINGS_MODULE="console.settings",
        LOG_LEVEL="WARNING",
    )
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], env=env, check=True, cwd=ROOT)
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    seeds = [arg for h in range(hosts) for arg in ("--seed", f"http://{host_address(h)}:{port}/")]
    subprocess.run(
        [*manage, "crawl", "create", "bench", *seeds, "--max-depth", "50", "--crawl-delay", "0",
         "--ignore-robots", "--concurrency", str(2 * workers), "--batch-size", str(max(1, hosts // 2))],
        env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    start = time.perf_counter()
    subprocess.run([*manage, "crawl", "start", "bench"], env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    procs = [
        subprocess.Popen(
            [*manage, "rqworker", "crawl", "--burst", "--worker-class", "rq.SimpleWorker"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=open(workdir / f"worker-{workers}-{n}.log", "w"),  # noqa: SIM115
        )
        for n in range(workers)
    ]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for proc in procs:
        proc.wait(timeout=1800)  # burst workers exit once the finished project's chains end
    elapsed = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    status = subprocess.run(
        [*manage, "crawl", "status", "bench", "--json"], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    )
    stats = json.loads(status.stdout)
    with sqlite3.connect(db) as conn:
        first, last = conn.execute("SELECT MIN(fetched_at), MAX(fetched_at) FROM console_page").fetchone()
    span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    # Rate over the crawl itself (first to last stored page), like Scrapy's open-to-close time;
    # the wall time from `crawl start` to the workers' exit adds process start-up.
    return {
        "pages": stats["pages"],
        "seconds": span,
        "wall_seconds": elapsed,
        "pages_per_s": stats["pages"] / span,
        "worker_cpu_ms_per_page": 1000 * cpu / stats["pages"],
    }


SPIDER = """
import json, time
import scrapy
from scrapy.linkextractors import LinkExtractor

class BenchSpider(scrapy.Spider):
    name = "bench"
    handle_httpstatus_list = [404]
    custom_settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, seeds="", allowed="", stats_path="", **kw):
        super().__init__(**kw)
        self.start_urls = seeds.split(",")
        self.allowed_domains = allowed.split(",")
        self.stats_path = stats_path
        self.extractor = LinkExtractor(tags=("a", "area", "frame", "iframe"), attrs=("href", "src"))
        self.started = time.perf_counter()

    def parse(self, response):
        yield {"url": response.url, "status": response.status, "title": response.css("title::text").get()}
        if response.status == 200:
            for link in self.extractor.extract_links(response):
                yield response.follow(link.url, self.parse)

    def closed(self, reason):
        pages = self.crawler.stats.get_value("downloader/response_count", 0)
        with open(self.stats_path, "w") as out:
            json.dump({"pages": pages, "seconds": time.perf_counter() - self.started}, out)
"""


def crawl_scrapy(workdir: Path, hosts: int, port: int) -> dict | None:
    try:
        import scrapy  # noqa: F401
    except ImportError:
        return None
    spider = workdir / "bench_spider.py"
    spider.write_text(SPIDER)
    stats = workdir / "scrapy-stats.json"
    seeds = ",".join(f"http://{host_address(h)}:{port}/" for h in range(hosts))
    allowed = ",".join(host_address(h) for h in range(hosts))
    subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", f"seeds={seeds}", "-a", f"allowed={allowed}",
         "-a", f"stats_path={stats}", "-o", str(workdir / "items.jsonl:jsonlines")],
        check=True, cwd=workdir, timeout=1800,
    )  # fmt: skip
    result = json.loads(stats.read_text())
    (workdir / "items.jsonl").unlink()
    result["pages_per_s"] = result["pages"] / result["seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=500)
    args = parser.parse_args()
    print(f"CPU placement: bench, workers, scrapy on CPUs {sorted(os.sched_getaffinity(0))}; nginx, redis unpinned")
    workdir = Path(tempfile.mkdtemp(prefix="crawl-bench-"))
    workdir.chmod(0o755)  # nginx's workers run as www-data when started by root
    port = free_port()
    write_site(workdir / "site", args.hosts, args.pages, port)
    nginx = start_nginx(workdir, args.hosts, port)
    redis_proc, redis_url = start_redis(str(workdir))
    results: dict[str, list[dict]] = {"1 worker": [], "2 workers": [], "scrapy": []}
    try:
        for run in range(args.runs):
            for name, job in (
                ("1 worker", lambda: crawl_ours(1, redis_url, workdir, args.hosts, port)),
                ("2 workers", lambda: crawl_ours(2, redis_url, workdir, args.hosts, port)),
                ("scrapy", lambda: crawl_scrapy(workdir, args.hosts, port)),
            ):
                result = job()
                if result is None:
                    print("scrapy: skipped (pip install -e '.[bench]')")
                    continue
                results[name].append(result)
                wall = (
                    f" (wall {result['wall_seconds']:.1f} s,"
                    f" workers' CPU {result['worker_cpu_ms_per_page']:.2f} ms/page)"
                    if "wall_seconds" in result
                    else ""
                )
                print(f"  run {run + 1} {name}: {result['pages']} pages in {result['seconds']:.1f} s{wall}"
                      f" = {result['pages_per_s']:.0f} pages/s", flush=True)  # fmt: skip
    finally:
        nginx.send_signal(signal.SIGQUIT)
        nginx.wait(timeout=10)
        redis_proc.terminate()
        redis_proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    medians = {name: statistics.median(r["pages_per_s"] for r in runs) for name, runs in results.items() if runs}
    print(f"\nmedians of {args.runs} run(s), pages/s:")
    for name, value in medians.items():
        print(f"  {name:10} {value:8.0f}")
    print(f"ratio 2 workers / 1 worker: {medians['2 workers'] / medians['1 worker']:.2f}x")
    if "scrapy" in medians:
        print(f"ratio 2 workers / scrapy:   {medians['2 workers'] / medians['scrapy']:.2f}x")
        print(f"ratio 1 worker / scrapy:    {medians['1 worker'] / medians['scrapy']:.2f}x")


if __name__ == "__main__":
    main()
