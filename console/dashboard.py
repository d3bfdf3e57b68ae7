"""What the operator's dashboard shows, read from Redis counters (never COUNT over the URL table)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import django_rq
from rq import Worker
from rq.registry import FailedJobRegistry

from console.charts import bar_chart_svg, throughput_svg
from console.crawl.jobs import heartbeat_key
from console.crawl.stats import OK_CLASSES, OUTCOME_CLASSES, stats_prefix
from console.models import Hub, Project, ProjectState
from console.selectors import project_status
from console.services import pool_for
from frontier.canonical import try_canonicalize
from frontier.models import UrlRecord

MAX_RETRY_SCAN = 50_000
SHARED_COUNTERS = (
    "waiting",
    "pending",
    "succeeded",
    "failed",
    "retrying",
    "robots_blocked",
    "pages",
    "pages_per_minute",
)


def _int_map(raw: dict) -> dict[str, int]:
    return {k.decode(): int(v) for k, v in raw.items()}


def _str_map(raw: dict) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in raw.items()}


@dataclass
class HostPage:
    rows: list[dict[str, Any]]
    total: int
    page: int
    pages: int


def host_table(project: Project, *, query: str = "", sort: str = "waiting", desc: bool = True,
               page: int = 1, per_page: int = 50) -> HostPage:  # fmt: skip
    """One page of the per-host table: searchable by host name, sortable by any column.

    Every host's numbers come from a few Redis reads; rows are built only for the page shown.
    """
    pool = pool_for(project)
    prefix = stats_prefix(project.pool_name)
    pipe = pool.redis.pipeline(transaction=False)
    for name in ("n", "ok", "fail", "ms", "last"):
        pipe.hgetall(prefix + "h:" + name)
    n, ok, fail, ms, last = pipe.execute()
    n, ok, fail, ms, last = (*map(_int_map, (n, ok, fail, ms)), _str_map(last))
    snapshots = {s.host: s for s in pool.host_snapshot()}
    retrying = _retrying_by_host(pool)
    now = time.time()
    hosts = set(snapshots) | set(n)
    if query:
        hosts = {h for h in hosts if query.lower() in h}

    def next_at(host: str) -> float | None:
        snap = snapshots.get(host)
        return snap.next_ok if snap and snap.next_ok and snap.next_ok > now else None

    columns: dict[str, Any] = {
        "host": lambda h: h,
        "waiting": lambda h: (snapshots[h].waiting if h in snapshots else 0) + retrying.get(h, 0),
        "inflight": lambda h: snapshots[h].leased if h in snapshots else 0,
        "succeeded": lambda h: ok.get(h, 0),
        "failed": lambda h: fail.get(h, 0),
        "retrying": lambda h: retrying.get(h, 0),
        "last": lambda h: last.get(h, ""),
        "latency_ms": lambda h: round(ms.get(h, 0) / n[h]) if n.get(h) else None,
        "next_at": next_at,
    }
    column = columns.get(sort, columns["waiting"])
    known = sorted((h for h in hosts if column(h) is not None), key=lambda h: (column(h), h), reverse=desc)
    ordered = known + sorted(h for h in hosts if column(h) is None)  # hosts without a value go last
    pages = max(1, -(-len(ordered) // per_page))
    page = min(max(1, page), pages)
    rows = []
    for host in ordered[(page - 1) * per_page : page * per_page]:
        row = {name: get(host) for name, get in columns.items()}
        row["next_reason"] = snapshots[host].why if row["next_at"] and host in snapshots else ""
        rows.append(row)
    return HostPage(rows, len(ordered), page, pages)


def _retrying_by_host(pool) -> dict[str, int]:
    """URLs waiting out a retry backoff, per host (read from the leases' parked records)."""
    ids = pool.redis.zrange(pool.keys.delayed, 0, MAX_RETRY_SCAN - 1)
    if not ids:
        return {}
    counts: dict[str, int] = {}
    for value in pool.redis.hmget(pool.keys.parked, ids):
        if value:
            host = value.decode().split(" ", 1)[0]
            counts[host] = counts.get(host, 0) + 1
    return counts


def failure_matrix(project: Project) -> dict[str, Any]:
    """Host x outcome class counts of failed fetches, hosts with most failures first."""
    raw = _int_map(pool_for(project).redis.hgetall(stats_prefix(project.pool_name) + "fm"))
    hosts: dict[str, dict[str, int]] = {}
    for field, count in raw.items():
        host, cls = field.split("\t", 1)
        hosts.setdefault(host, {})[cls] = count
    columns = [c for c in OUTCOME_CLASSES if c not in OK_CLASSES]
    rows = sorted(hosts.items(), key=lambda item: -sum(item[1].values()))
    return {
        "columns": columns,
        "rows": [{"host": h, "cells": [{"cls": col, "n": c.get(col, 0)} for col in columns]} for h, c in rows],
    }


def failure_urls(project: Project, host: str, cls: str, *, limit: int = 500) -> list[UrlRecord]:
    """URLs of ``host`` whose last outcome falls in class ``cls`` (the matrix's drill-down)."""
    urls = UrlRecord.objects.filter(pool__name=project.pool_name, host=host).exclude(state="succeeded")
    if cls == "404/410":
        urls = urls.filter(last_status__in=(404, 410))
    elif cls == "429":
        urls = urls.filter(last_status=429)
    elif cls in ("4xx", "5xx"):
        low = 400 if cls == "4xx" else 500
        urls = urls.filter(last_status__gte=low, last_status__lt=low + 100).exclude(last_status__in=(404, 410, 429))
    elif cls == "robots":
        urls = urls.filter(last_error="robots.txt")
    elif cls in ("timeout", "dns"):
        urls = urls.filter(last_status__isnull=True, last_error__startswith=cls)
    elif cls == "refused":
        urls = urls.filter(last_status__isnull=True, last_error="connection refused")
    else:
        urls = urls.filter(last_status__isnull=True).exclude(last_error="")
    return list(urls.order_by("id")[:limit])


def hub_rows(project: Project) -> list[dict[str, Any]]:
    pool = pool_for(project)
    hubs = list(Hub.objects.filter(project=project).order_by("id"))
    found = {h.pk: try_canonicalize(h.url) for h in hubs}
    fingerprints = [c.fingerprint for c in found.values() if c]
    rows = UrlRecord.objects.filter(pool__name=project.pool_name, fingerprint__in=fingerprints)
    records = dict(rows.values_list("fingerprint", "id"))
    pipe = pool.redis.pipeline(transaction=False)
    for hub in hubs:
        pipe.zscore(pool.keys.hubs, records.get(found[hub.pk].fingerprint if found[hub.pk] else "", 0))
    due = pipe.execute()
    return [
        {
            "id": hub.pk, "url": hub.url, "refresh_span": hub.refresh_span, "enabled": hub.enabled,
            "last_fetched_at": hub.last_fetched_at.timestamp() if hub.last_fetched_at else None,
            "next_due_at": due_at, "last_new_urls": hub.last_new_urls,
        }
        for hub, due_at in zip(hubs, due, strict=True)
    ]  # fmt: skip


def workers_info(project: Project) -> dict[str, Any]:
    """Live RQ workers on the crawl queue, and this project's queued and failed jobs."""
    queue = django_rq.get_queue("crawl")
    workers = [
        {"name": w.name, "state": str(w.get_state()), "pid": w.pid, "hostname": w.hostname}
        for w in Worker.all(queue=queue)
    ]
    queued = sum(1 for job in queue.get_jobs(0, 1000) if job.args and job.args[0] == project.pk)
    registry = FailedJobRegistry(queue=queue)
    failed = sum(1 for job in queue.job_class.fetch_many(registry.get_job_ids(0, 999), connection=queue.connection)
                 if job is not None and job.args and job.args[0] == project.pk)  # fmt: skip
    return {"workers": workers, "queued": queued, "failed": failed}


def why_not_progressing(project: Project, stats: dict[str, int], workers: dict[str, Any], fetched_last_minute: int,
                        pool) -> str:  # fmt: skip
    """A plain sentence when nothing is being fetched; empty when the crawl is moving."""
    if project.state != ProjectState.RUNNING:
        return f"The project is {project.state}{': ' + project.state_reason if project.state_reason else ''}."
    if stats["pending"] or (fetched_last_minute and stats["hosts_ready"]):
        return ""
    if not workers["workers"]:
        return "No worker is running: start one with `manage.py rqworker crawl`."
    chains = [heartbeat_key(project.pk, slot) for slot in range(project.concurrency)]
    if not django_rq.get_queue("crawl").connection.exists(*chains):
        return "Its batch jobs are gone (a worker stopped in the middle of one?): press “Restart jobs”."
    if stats["waiting"] == 0 and stats["retrying"] == 0:
        return "Nothing is waiting: the hubs are not due yet." if stats["hubs"] else "Nothing is left to crawl."
    if stats["hosts_ready"] == 0 and stats["hosts_cooling"]:
        reasons = {v.decode() for v in pool.redis.hvals(pool.keys.why)} or {"crawl delay"}
        head = pool.redis.zrange(pool.keys.cooling, 0, 0, withscores=True)
        wait = f"; the next in {max(0.0, head[0][1] - time.time()):.0f} s" if head else ""
        return f"All hosts are cooling down ({', '.join(sorted(reasons))}){wait}."
    if stats["waiting"] == stats["retrying"]:
        return "Every waiting URL is backing off after a failure."
    return ""


def dashboard_data(project: Project) -> dict[str, Any]:
    """Everything the live dashboard refreshes, in one JSON-able dict."""
    pool = pool_for(project)
    stats = pool.stats()
    status = project_status(project=project, pool_stats=stats)
    prefix = stats_prefix(project.pool_name)
    now = time.time()
    minute = int(now // 60) * 60
    minutes = [minute - 60 * i for i in range(59, -1, -1)]
    pipe = pool.redis.pipeline(transaction=False)
    for m in minutes:
        pipe.hgetall(f"{prefix}tp:{m}")
    pipe.hgetall(prefix + "sc")
    *per_minute, classes = pipe.execute()
    series = [
        (m, int(r.get(b"fetched", 0)), int(r.get(b"failed", 0))) for m, r in zip(minutes, per_minute, strict=True)
    ]
    classes = _int_map(classes)
    workers = workers_info(project)
    last_minute = series[-1][1] + series[-1][2] + series[-2][1] + series[-2][2]
    return {
        "now": now,
        "state": project.state,
        "state_reason": project.state_reason,
        "counters": {
            **{k: status[k] for k in SHARED_COUNTERS},
            "hosts": stats["hosts_ready"] + stats["hosts_cooling"],
        },
        "throughput_svg": throughput_svg(series),
        "status_svg": bar_chart_svg([(c, classes.get(c, 0)) for c in OUTCOME_CLASSES if classes.get(c)]),
        "hubs": hub_rows(project),
        "workers": workers,
        "why": why_not_progressing(project, stats, workers, last_minute, pool),
    }
