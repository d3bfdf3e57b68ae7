"""Several processes on one pool: no URL handed out twice, none queued twice, none lost."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest
import redis
from django.db import connections

from frontier.models import UrlRecord
from frontier.pool import UrlPool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FORK = multiprocessing.get_context("fork")
URLS = [f"http://127.0.0.{10 + h}:8000/page/{i}" for h in range(40) for i in range(25)]


def _pool(redis_url: str, **kwargs) -> UrlPool:
    return UrlPool("race", redis_client=redis.Redis.from_url(redis_url), **kwargs)


def _popper(redis_url: str, start: float, results) -> None:
    pool = _pool(redis_url, max_in_flight_per_host=1000)
    while time.time() < start:
        time.sleep(0.001)
    mine: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        claims = pool.pop(7)
        if not claims:
            break
        mine += [c.url for c in claims]
        pool.set_status_many([(c.url, 200, "") for c in claims])
    results.put(mine)
    connections.close_all()


def _adder(redis_url: str, start: float, results) -> None:
    pool = _pool(redis_url)
    while time.time() < start:
        time.sleep(0.001)
    added = sum(pool.add_many(URLS[i : i + 50]) for i in range(0, len(URLS), 50))
    results.put(added)
    connections.close_all()


def _lease_and_hang(redis_url: str, results) -> None:
    pool = _pool(redis_url, pending_timeout=1.0)
    claims = pool.pop(100)
    results.put([c.url for c in claims])
    time.sleep(60)  # "crashes" before reporting: the test kills it


def _run(target, redis_url: str, workers: int) -> list:
    connections.close_all()  # children must open their own connections, never share the parent's
    results = FORK.Queue()
    start = time.time() + 0.3
    procs = [FORK.Process(target=target, args=(redis_url, start, results)) for _ in range(workers)]
    for proc in procs:
        proc.start()
    out = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    return out


def test_concurrent_pops_never_return_the_same_url(redis_url):
    pool = _pool(redis_url)
    assert pool.add_many(URLS) == len(URLS)
    popped = _run(_popper, redis_url, workers=3)
    union = [url for part in popped for url in part]
    assert len(union) == len(set(union)) == len(URLS)
    assert all(part for part in popped), "every worker should have had work"
    assert pool.stats()["succeeded"] == len(URLS)
    assert UrlRecord.objects.filter(state="succeeded").count() == len(URLS)


def test_concurrent_adds_of_the_same_urls_queue_each_once(redis_url):
    added = _run(_adder, redis_url, workers=3)
    assert sum(added) == len(URLS)
    pool = _pool(redis_url, max_in_flight_per_host=1000)
    assert pool.size() == len(URLS)
    assert UrlRecord.objects.count() == len(URLS)
    seen: list[str] = []
    for _ in range(100):
        claims = pool.pop(100)
        if not claims:
            break
        seen += [c.url for c in claims]
        pool.set_status_many([(c.url, 200, "") for c in claims])
    assert sorted(seen) == sorted(URLS)


def test_a_killed_worker_loses_nothing(redis_url):
    pool = _pool(redis_url, pending_timeout=1.0)
    pool.add_many(URLS[:300])
    connections.close_all()
    results = FORK.Queue()
    worker = FORK.Process(target=_lease_and_hang, args=(redis_url, results))
    worker.start()
    leased = results.get(timeout=60)
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=10)
    assert len(leased) == 12  # the first 300 URLs span 12 hosts: one lease per host
    assert all(pool.state(url) == "pending" for url in leased)
    time.sleep(1.2)
    recovered: list[str] = []
    for _ in range(100):
        claims = pool.pop(100)
        if not claims:
            break
        recovered += [c.url for c in claims]
        pool.set_status_many([(c.url, 200, "") for c in claims])
    assert sorted(recovered) == sorted(URLS[:300])
    assert set(leased) <= set(recovered)
    assert pool.stats()["reclaimed"] == 12
