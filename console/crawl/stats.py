"""Live crawl numbers kept in Redis as the crawl runs, so dashboards never COUNT the URL table.

Per project (all keys share the project pool's hash tag):
- ``h:n``, ``h:ok``, ``h:fail``, ``h:ms``, ``h:last``: per host fetches, successes, failures,
  total latency and last outcome;
- ``fm``: the failure matrix, ``"host<TAB>class"`` -> fetches with that outcome class;
- ``sc``: outcome class -> fetches (the status-class chart);
- ``tp:<minute>``: fetched / failed in that minute (expires after two hours);
- ``fetched``: pages stored so far.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import redis

from console.models import Project

OUTCOME_CLASSES = ("2xx", "3xx", "404/410", "4xx", "429", "5xx", "timeout", "dns", "refused", "robots", "error")
OK_CLASSES = frozenset({"2xx", "3xx"})
MINUTE_TTL = 2 * 3600


def outcome_class(status: int | None, error: str) -> str:
    """The failure-report column of one fetch outcome."""
    if status is not None:
        if status in (404, 410):
            return "404/410"
        if status == 429:
            return "429"
        if 200 <= status < 600:
            return f"{status // 100}xx"
        return "error"
    if error.startswith("timeout"):
        return "timeout"
    if error.startswith("dns"):
        return "dns"
    if error == "connection refused":
        return "refused"
    if error == "robots.txt":
        return "robots"
    return "error"


def stats_prefix(pool_name: str) -> str:
    return f"console:{{{pool_name}}}:"


def fetched_counter_key(project: Project) -> str:
    """Pages stored so far (fetch outcomes recorded), the ``max_pages`` budget's meter."""
    return stats_prefix(project.pool_name) + "fetched"


def record_outcomes(
    client: redis.Redis, pool_name: str, outcomes: Iterable[tuple[str, int | None, str, int]], now: float
) -> None:
    """Count fetch outcomes ``(host, status, error, elapsed_ms)`` in one MULTI."""
    prefix = stats_prefix(pool_name)
    per_host: dict[str, Counter] = {}
    classes: Counter[str] = Counter()
    last: dict[str, str] = {}
    minute = int(now // 60) * 60
    ok = fail = 0
    for host, status, error, elapsed_ms in outcomes:
        cls = outcome_class(status, error)
        counts = per_host.setdefault(host, Counter())
        counts[cls] += 1
        classes[cls] += 1
        if cls == "robots":
            continue  # refused before any request: in the matrix, not in fetch counts
        counts["n"] += 1
        counts["ms"] += elapsed_ms
        counts["ok" if cls in OK_CLASSES else "fail"] += 1
        last[host] = str(status) if status is not None else cls
        ok, fail = (ok + 1, fail) if cls in OK_CLASSES else (ok, fail + 1)
    if not per_host:
        return
    pipe = client.pipeline(transaction=True)
    for host, counts in per_host.items():
        for field in ("n", "ok", "fail", "ms"):
            if counts[field]:
                pipe.hincrby(prefix + "h:" + field, host, counts[field])
        for cls in OUTCOME_CLASSES:
            if counts[cls] and cls not in OK_CLASSES:
                pipe.hincrby(prefix + "fm", f"{host}\t{cls}", counts[cls])
    if last:
        pipe.hset(prefix + "h:last", mapping=last)
    for cls, n in classes.items():
        pipe.hincrby(prefix + "sc", cls, n)
    if ok or fail:
        key = f"{prefix}tp:{minute}"
        pipe.hincrby(key, "fetched", ok)
        pipe.hincrby(key, "failed", fail)
        pipe.expire(key, MINUTE_TTL)
    pipe.execute()


def purge_stats(client: redis.Redis, pool_name: str) -> None:
    """Delete a project's live numbers (with the project)."""
    keys = list(client.scan_iter(match=stats_prefix(pool_name).replace("{", "\\{").replace("}", "\\}") + "*"))
    if keys:
        client.delete(*keys)
