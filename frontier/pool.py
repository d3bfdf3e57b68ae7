"""``UrlPool``: the frontier API. SQL holds every URL for good; Redis holds the schedule.

Order of writes, so that a crash anywhere loses nothing:
- add: the SQL insert commits, then Redis queues the new ids (a crash in between leaves a
  waiting row that ``rebuild()`` schedules);
- report: the SQL outcome commits, then Redis ends the lease (a crash in between lets the lease
  expire; the URL is popped again, and ``pop`` drops it because SQL says it is done).
SQL row ids are the members of every Redis structure; URLs themselves live only in SQL.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis
from django.db import transaction

from frontier import store
from frontier.canonical import CanonicalUrl, InvalidUrl, canonicalize, try_canonicalize
from frontier.conf import get_redis, setting
from frontier.keys import PoolKeys
from frontier.models import UrlState
from frontier.outcomes import HOST_BACKOFF_STATUSES, Outcome, backoff_seconds, classify
from frontier.scripts import bind_scripts

logger = logging.getLogger(__name__)

MAX_PRIORITY = 999
MOVE_LIMIT = 1000  # expired leases, due retries and cooled hosts moved per pop (keeps scripts short)
_POOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,100}\Z")

Report = tuple[str, int | None, str] | tuple[str, int | None, str, float | None]


class FrontierError(Exception):
    """Base of the frontier's own errors."""


class SchedulingError(FrontierError):
    """SQL was written but Redis could not be updated; ``rebuild()`` repairs the schedule."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A leased URL: fetch it, then report it with ``set_status``."""

    url: str
    is_hub: bool
    depth: int
    priority: int
    attempt: int
    host: str


@dataclass(frozen=True, slots=True)
class HostSnapshot:
    """One host's scheduling facts: what waits, what is leased, when it may be fetched and why."""

    host: str
    waiting: int
    leased: int
    next_ok: float | None
    why: str


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


class UrlPool:
    """A named URL frontier shared by every process that uses the same Redis and database."""

    def __init__(
        self,
        name: str,
        *,
        failure_threshold: int = 3,
        pending_timeout: float = 300.0,
        crawl_delay: float = 0.0,
        max_in_flight_per_host: int = 1,
        clock: Callable[[], float] = time.time,
        order: str = "fifo",
        backoff_base: float | None = None,
        backoff_max: float | None = None,
        redis_client: redis.Redis | None = None,
        using: str = "default",
    ) -> None:
        if not _POOL_NAME.match(name):
            raise ValueError(f"pool name must be 1-100 of A-Z a-z 0-9 _ . : - (got {name!r})")
        if order not in ("fifo", "lifo"):
            raise ValueError(f"order must be 'fifo' or 'lifo' (got {order!r})")
        if failure_threshold < 0 or pending_timeout <= 0 or crawl_delay < 0 or max_in_flight_per_host < 1:
            raise ValueError("failure_threshold >= 0, pending_timeout > 0, crawl_delay >= 0, max_in_flight >= 1")
        self.name = name
        self.failure_threshold = failure_threshold
        self.pending_timeout = float(pending_timeout)
        self.crawl_delay = float(crawl_delay)
        self.max_in_flight_per_host = max_in_flight_per_host
        self.clock = clock
        self.order = order
        self.backoff_base = float(setting("BACKOFF_BASE") if backoff_base is None else backoff_base)
        self.backoff_max = float(setting("BACKOFF_MAX") if backoff_max is None else backoff_max)
        self.using = using
        self.redis = redis_client or get_redis()
        self.keys = PoolKeys(name, setting("KEY_PREFIX"))
        self._key_list = self.keys.all()
        self._scripts = bind_scripts(self.redis)
        self._pool_id: int | None = None

    def __repr__(self) -> str:
        return f"UrlPool({self.name!r})"

    # -- plumbing -------------------------------------------------------------------------

    @property
    def pool_id(self) -> int:
        if self._pool_id is None:
            self._pool_id = store.pool_id_for(self.name, self.using)
        return self._pool_id

    def _run(self, script: str, now: float, *args: Any) -> Any:
        common = [self.keys.queue_prefix, repr(now), self.max_in_flight_per_host, repr(self.crawl_delay), self.order]
        return self._scripts[script](keys=self._key_list, args=[*common, *args])

    def _schedule(self, script: str, now: float, *args: Any, stored: int) -> Any:
        """Run a script that follows an SQL commit; on failure say how the schedule is repaired."""
        try:
            return self._run(script, now, *args)
        except redis.RedisError as exc:
            logger.error("pool %s: %d URL(s) saved in SQL but not scheduled in Redis: %s", self.name, stored, exc)
            raise SchedulingError(
                f"{stored} URL(s) of pool {self.name!r} are saved but not scheduled ({exc}); "
                f"`manage.py frontier rebuild {self.name}` repairs the schedule"
            ) from exc

    # -- adding ---------------------------------------------------------------------------

    def add(self, url: str, *, priority: int = 0, depth: int = 0, always: bool = False) -> bool:
        """Queue ``url``; True if newly queued. ``always`` re-queues a succeeded or failed URL."""
        if self.add_many([url], priority=priority, depth=depth) == 1:
            return True
        if not always:
            return False
        found = try_canonicalize(url)
        if found is None:
            return False
        now = self.clock()
        with transaction.atomic(using=self.using):
            old_state = store.requeue_permanent(self.pool_id, found.fingerprint, _utc(now), self.using)
            if old_state is None:
                return False
            row = store.by_fingerprints(self.pool_id, [found.fingerprint], self.using)[found.fingerprint]
        self._schedule("add", now, old_state, 0, 0, row.id, row.host, row.priority, stored=1)
        return True

    def add_many(self, urls: Iterable[str | CanonicalUrl], *, priority: int = 0, depth: int = 0) -> int:
        """Queue every URL not known yet; return how many were newly queued.

        Invalid URLs are skipped and counted as ``rejected``, known ones as ``duplicates``.
        URLs already canonicalised (``CanonicalUrl``) are taken as they are.
        """
        if not -MAX_PRIORITY <= priority <= MAX_PRIORITY:
            raise ValueError(f"priority must be within ±{MAX_PRIORITY} (got {priority})")
        now = self.clock()
        fresh: dict[str, store.NewUrl] = {}
        rejected = duplicates = 0
        for url in urls:
            found = url if isinstance(url, CanonicalUrl) else try_canonicalize(url)
            if found is None:
                rejected += 1
            elif found.fingerprint in fresh:
                duplicates += 1
            else:
                fresh[found.fingerprint] = store.NewUrl(found.fingerprint, found.url, found.host, depth, priority)
        inserted = store.insert_new(self.pool_id, list(fresh.values()), _utc(now), self.using) if fresh else {}
        duplicates += len(fresh) - len(inserted)
        args: list[Any] = ["", rejected, duplicates]
        for fp, new in fresh.items():
            pk = inserted.get(fp)
            if pk is not None:
                args += [pk, new.host, priority]
        if not inserted and not rejected and not duplicates:
            return 0
        return int(self._schedule("add", now, *args, stored=len(inserted)))

    # -- popping --------------------------------------------------------------------------

    def pop(self, count: int, *, hub_percent: int = 50) -> list[Claim]:
        """Lease up to ``count`` URLs, at most one per host, hubs taking up to ``hub_percent``."""
        if count <= 0:
            return []
        if not 0 <= hub_percent <= 100:
            raise ValueError(f"hub_percent must be within 0..100 (got {hub_percent})")
        now = self.clock()
        flat = self._run("pop", now, count, hub_percent, repr(self.pending_timeout), MOVE_LIMIT)
        if not flat:
            return []
        leased = [(int(flat[i]), flat[i + 1] == 1) for i in range(0, len(flat), 2)]
        rows = store.by_ids(self.pool_id, [pk for pk, _ in leased], self.using)
        claims: list[Claim] = []
        stale: list[int] = []
        for pk, is_hub in leased:
            row = rows.get(pk)
            if row is None or (row.state != UrlState.WAITING and not row.is_hub):
                stale.append(pk)
                continue
            claims.append(Claim(row.url, is_hub, row.depth, row.priority, row.attempts + 1, row.host))
        if stale:
            logger.warning("pool %s: dropped %d scheduled id(s) that SQL says are done or gone", self.name, len(stale))
            self._run("drop", now, *stale)
        return claims

    # -- reporting ------------------------------------------------------------------------

    def set_status(
        self, url: str, status_code: int | None, *, error: str = "", retry_after: float | None = None
    ) -> str:
        """Record the outcome of fetching ``url``; return its new state ("unknown" if never added)."""
        return self._report([(url, status_code, error, retry_after, None)]).get(url, "unknown")

    def set_status_many(self, reports: Iterable[Report]) -> None:
        """Record many outcomes: ``(url, status_code, error)`` or with a 4th item, ``retry_after``."""
        self._report([(r[0], r[1], r[2], r[3] if len(r) > 3 else None, None) for r in reports])

    def fail_many(self, urls: Iterable[str], *, error: str) -> None:
        """Fail leased URLs for good without fetching them (e.g. robots.txt disallows them)."""
        self._report([(url, None, error, None, Outcome.FAILED) for url in urls])

    def give_back(self, urls: Iterable[str]) -> int:
        """Return leased URLs to their place in the queue, no attempt counted (they were not fetched).

        Returns how many leases ended. Pair with :meth:`hold_host` to retry a host later.
        """
        found = [c for c in map(try_canonicalize, urls) if c is not None]
        rows = store.by_fingerprints(self.pool_id, [c.fingerprint for c in found], self.using)
        entries: list[Any] = []
        for row in rows.values():
            entries += [row.id, row.host, "back", "0", "0"]
        return int(self._run("report", self.clock(), *entries)) if entries else 0

    def _report(self, reports: Sequence[tuple[str, int | None, str, float | None, Outcome | None]]) -> dict[str, str]:
        parsed: dict[str, tuple[str, int | None, str, float | None, Outcome | None]] = {}
        states: dict[str, str] = {}
        for url, status, error, retry_after, forced in reports:
            classify(status)  # a bad status code raises before anything is written
            found = try_canonicalize(url)
            if found is None:
                logger.warning("pool %s: report for a URL that cannot be crawled: %r", self.name, url)
                states[url] = "unknown"
                continue
            parsed.setdefault(found.fingerprint, (url, status, error or "", retry_after, forced))
        if not parsed:
            return states
        now = self.clock()
        entries: list[Any] = []
        with transaction.atomic(using=self.using):
            rows = store.by_fingerprints(self.pool_id, list(parsed), self.using, lock=True)
            outcomes: list[store.OutcomeRow] = []
            for fp, (url, status, error, retry_after, forced) in parsed.items():
                row = rows.get(fp)
                if row is None:
                    logger.warning("pool %s: report for a URL it never had: %s", self.name, url)
                    states[url] = "unknown"
                    continue
                kind, state, due, outcome = self._decide(row, status, error, retry_after, forced, now)
                states[url] = state
                if outcome is not None:
                    outcomes.append(outcome)
                hold = 0.0
                if status in HOST_BACKOFF_STATUSES:
                    hold = retry_after or self._backoff(row.attempts + 1)
                entries += [row.id, row.host, kind, repr(due), repr(float(hold))]
            store.write_outcomes(outcomes, _utc(now), self.using)
        if entries:
            self._schedule("report", now, *entries, stored=len(entries) // 5)
        return states

    def _decide(
        self,
        row: store.StoredUrl,
        status: int | None,
        error: str,
        retry_after: float | None,
        forced: Outcome | None,
        now: float,
    ) -> tuple[str, str, float, store.OutcomeRow | None]:
        """(script kind, new state, retry due time, SQL row update or None) for one report."""
        attempts = row.attempts + 1
        if row.is_hub:
            update = store.OutcomeRow(row.id, UrlState.WAITING, attempts, status, error, None)
            return "hub", UrlState.WAITING, 0.0, update
        if row.state != UrlState.WAITING:
            return "late", row.state, 0.0, None  # already final: a late or repeated report
        outcome = forced or classify(status)
        if outcome is Outcome.RETRY and attempts <= self.failure_threshold:
            wait = retry_after if retry_after is not None else self._backoff(attempts)
            due = now + max(0.0, float(wait))
            return (
                "retry",
                UrlState.WAITING,
                due,
                store.OutcomeRow(row.id, UrlState.WAITING, attempts, status, error, _utc(due)),
            )
        state = UrlState.SUCCEEDED if outcome is Outcome.SUCCEEDED else UrlState.FAILED
        return state.value, state, 0.0, store.OutcomeRow(row.id, state, attempts, status, error, None)

    def _backoff(self, failures: int) -> float:
        return backoff_seconds(failures, base=self.backoff_base, maximum=self.backoff_max)

    # -- hubs and hosts -------------------------------------------------------------------

    def set_hubs(self, urls: Iterable[str], refresh_span: float | Mapping[str, float]) -> None:
        """Make ``urls`` the pool's hubs, re-popped every ``refresh_span`` seconds (or per URL).

        Raises :class:`InvalidUrl` for a URL that cannot be crawled. Hubs that are dropped become
        regular URLs: done if they were ever fetched, queued otherwise.
        """
        spans: dict[str, tuple[CanonicalUrl, float]] = {}
        for url in urls:
            span = refresh_span[url] if isinstance(refresh_span, Mapping) else refresh_span
            if not span or float(span) <= 0:
                raise ValueError(f"refresh span must be positive seconds (got {span!r} for {url})")
            found = canonicalize(url)
            spans[found.fingerprint] = (found, float(span))
        now = self.clock()
        with transaction.atomic(using=self.using):
            new = [store.NewUrl(fp, c.url, c.host, 0, 0) for fp, (c, _) in spans.items()]
            store.insert_new(self.pool_id, new, _utc(now), self.using)
            rows = store.by_fingerprints(self.pool_id, list(spans), self.using, lock=True)
            hubs = [(rows[fp].id, span) for fp, (_, span) in spans.items()]
            store.make_hubs(hubs, _utc(now), self.using)
            former = store.demote_hubs(self.pool_id, {pk for pk, _ in hubs}, _utc(now), self.using)
        args: list[Any] = [len(hubs)]
        for fp, (found, span) in spans.items():
            row = rows[fp]
            was = "" if row.is_hub or row.state == UrlState.WAITING else row.state
            args += [row.id, found.host, repr(span), was]
        for pk, host, priority, fetched in former:
            args += [pk, host, "" if fetched else priority]
        self._schedule("hubs", now, *args, stored=len(hubs))

    def hold_host(self, host: str, seconds: float, *, reason: str) -> None:
        """Fetch nothing from ``host`` for ``seconds`` (e.g. its robots.txt answered 5xx)."""
        self._run("hold", self.clock(), host, "hold", repr(float(seconds)), reason)

    def set_host_delay(self, host: str, seconds: float) -> None:
        """Wait at least ``seconds`` between fetches from ``host`` (robots.txt Crawl-delay); 0 clears."""
        self._run("hold", self.clock(), host, "delay", repr(float(seconds)))

    # -- reading --------------------------------------------------------------------------

    def state(self, url: str) -> str:
        """ "waiting" | "pending" | "succeeded" | "failed" | "unknown" (never added or not crawlable)."""
        found = try_canonicalize(url)
        if found is None:
            return "unknown"
        row = store.by_fingerprints(self.pool_id, [found.fingerprint], self.using).get(found.fingerprint)
        if row is None:
            return "unknown"
        if row.state != UrlState.WAITING:
            return row.state
        deadline = self.redis.zscore(self.keys.pending, row.id)
        return "pending" if deadline is not None and deadline > self.clock() else "waiting"

    def size(self) -> int:
        """Waiting URLs, retries included (hubs not)."""
        return int(self.redis.hget(self.keys.stats, "waiting") or 0)

    def empty(self) -> bool:
        return self.size() == 0

    def pending_count(self) -> int:
        return int(self.redis.zcard(self.keys.pending))

    def stats(self) -> dict[str, int]:
        """Counters kept as the pool works (no SQL count): cheap enough for a live dashboard."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(self.keys.stats)
        for key in ("pending", "delayed", "hubs", "turns", "cooling"):
            pipe.zcard(getattr(self.keys, key))
        raw, pending, delayed, hubs, ready, cooling = pipe.execute()
        counters = {k.decode(): int(v) for k, v in raw.items()}
        names = ("waiting", "succeeded", "failed", "rejected", "duplicates", "reclaimed", "dropped")
        result = {name: counters.get(name, 0) for name in names}
        result.update(pending=pending, retrying=delayed, hubs=hubs, hosts_ready=ready, hosts_cooling=cooling)
        return result

    def host_snapshot(self) -> list[HostSnapshot]:
        """Every host's queue length, leases, next allowed fetch time and its reason, in one call."""
        flat = self._run("hosts", self.clock())
        return [
            HostSnapshot(flat[i].decode(), int(flat[i + 1]), int(flat[i + 2]),
                         float(flat[i + 3]) if flat[i + 3] else None, flat[i + 4].decode())
            for i in range(0, len(flat), 5)
        ]  # fmt: skip

    def next_due_in(self) -> float | None:
        """Seconds until something may be popped (0 if now), or None when nothing is scheduled."""
        now = self.clock()
        if self.redis.zcard(self.keys.turns):
            return 0.0
        firsts = []
        for key in (self.keys.cooling, self.keys.delayed, self.keys.hubs, self.keys.pending):
            head = self.redis.zrange(key, 0, 0, withscores=True)
            if head:
                firsts.append(head[0][1])
        return max(0.0, min(firsts) - now) if firsts else None

    # -- maintenance ----------------------------------------------------------------------

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """Restore the schedule from SQL (after Redis lost it); return how many URLs it scheduled.

        Safe while workers run: live leases are kept, and ids already queued are not queued twice.
        Succeeded and failed URLs stay done; counters are recounted from SQL.
        """
        now = self.clock()
        self._run("wipe", now, "schedule")
        scheduled = 0
        for rows in store.waiting_rows(self.pool_id, self.using):
            args: list[Any] = []
            for row in rows:
                if row.is_hub:
                    span = row.refresh_span or 0.0
                    due = row.fetched_at.timestamp() + span if row.fetched_at else now
                    args += [row.id, row.host, "hub", f"{due!r} {span!r}"]
                elif row.next_try_at and row.next_try_at.timestamp() > now:
                    args += [row.id, row.host, "retry", f"{row.next_try_at.timestamp()!r} {row.priority}"]
                else:
                    args += [row.id, row.host, "queue", row.priority]
            scheduled += int(self._run("reload", now, *args))
            if progress:
                progress(scheduled)
        counts = store.count_by_state(self.pool_id, self.using)
        self.redis.hset(
            self.keys.stats,
            mapping={"succeeded": counts.get(UrlState.SUCCEEDED, 0), "failed": counts.get(UrlState.FAILED, 0)},
        )
        logger.info("pool %s: rebuilt, %d URL(s) scheduled", self.name, scheduled)
        return scheduled

    def purge(self) -> None:
        """Forget the pool entirely: its Redis keys and its SQL rows."""
        self._run("wipe", self.clock(), "all")
        store.delete_pool(self.pool_id, self.using)
        self._pool_id = None


__all__ = ["Claim", "FrontierError", "InvalidUrl", "SchedulingError", "UrlPool"]
