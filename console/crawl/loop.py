"""One turn of the crawl loop: pop a batch, honour robots.txt, fetch, parse, store, report."""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests
from django.conf import settings
from django.utils import timezone

from console.crawl.fetch import FetchLimits, FetchResult, fetch
from console.crawl.parse import ParsedPage, Rule, parse_html
from console.crawl.pipeline import store_pages
from console.crawl.robots import RobotsCache, RobotsPolicy, origin_of
from console.crawl.scope import Scope, scope_for
from console.crawl.session import process_executor, process_session
from console.crawl.stats import fetched_counter_key, record_outcomes
from console.models import Hub, Project
from console.services import pool_for
from frontier.canonical import CanonicalUrl, try_canonicalize
from frontier.pool import Claim, UrlPool

logger = logging.getLogger(__name__)

HUB_LINK_PRIORITY = 5  # links found on hubs jump ahead of ordinary links (priority 0)
IDLE_WAIT = 1.0


@dataclass
class BatchOutcome:
    fetched: int = 0
    wait: float = 0.0  # seconds before another batch can have work
    finished_reason: str = ""


def pages_fetched(project: Project, pool: UrlPool) -> int:
    return int(pool.redis.get(fetched_counter_key(project)) or 0)


def rules_for(project: Project) -> list[Rule]:
    return [
        Rule(r.field, r.kind, r.expression, re.compile(r.url_pattern) if r.url_pattern else None, r.multiple)
        for r in project.rules.all()
    ]


def limits_for(project: Project) -> FetchLimits:
    return FetchLimits(
        timeout=project.request_timeout,
        deadline=project.request_timeout * 3,
        max_bytes=project.max_page_bytes,
        user_agent=project.user_agent,
    )


class CrawlRun:
    """One job's view of a project, built once and used for many batches: pool, scope, rules."""

    def __init__(self, project: Project, *, session: requests.Session | None = None) -> None:
        self.project = project
        self.pool = pool_for(project)
        self.scope = scope_for(project)
        self.rules = rules_for(project)
        self.limits = limits_for(project)
        self.session = session or process_session()
        self.robots = RobotsCache(self.pool.redis, ttl=settings.CRAWL_ROBOTS_TTL, retry_ttl=settings.CRAWL_ROBOTS_RETRY)

    def batch(self) -> BatchOutcome:
        """Crawl one batch; say how long to wait before the next, or why the crawl is done."""
        project, pool = self.project, self.pool
        if project.max_pages and pages_fetched(project, pool) >= project.max_pages:
            return BatchOutcome(finished_reason=f"page budget of {project.max_pages} reached")
        claims = pool.pop(project.batch_size, hub_percent=project.hub_percent)
        if not claims:
            return self._idle()
        if project.obey_robots:
            claims = self._apply_robots(claims)
        if not claims:
            return BatchOutcome(wait=0.0)
        session, limits = self.session, self.limits
        results = list(process_executor().map(lambda c: fetch(session, c.url, limits), claims))
        self._record(claims, results)
        return BatchOutcome(fetched=len(claims))

    def _idle(self) -> BatchOutcome:
        pool = self.pool
        wait = pool.next_due_in()
        nothing_left = wait is None and pool.empty() and pool.pending_count() == 0
        if nothing_left and not self.project.hubs.filter(enabled=True).exists():
            return BatchOutcome(finished_reason="nothing left to crawl")
        return BatchOutcome(wait=IDLE_WAIT if wait is None else wait)

    def _apply_robots(self, claims: list[Claim]) -> list[Claim]:
        """Keep the claims robots.txt allows now; fail disallowed ones; give back the rest."""
        pool, robots, user_agent = self.pool, self.robots, self.project.user_agent
        origins = sorted({origin_of(c.url) for c in claims})
        hits = pool.redis.mget([robots.key(o) for o in origins])
        cached = {o for o, hit in zip(origins, hits, strict=True) if hit}
        fetched = process_executor().map(lambda o: robots.policy(o, self.session, self.limits), origins)
        policies: dict[str, RobotsPolicy] = dict(zip(origins, fetched, strict=True))
        keep: list[Claim] = []
        blocked: list[str] = []
        back: list[str] = []
        for claim in claims:
            origin = origin_of(claim.url)
            policy = policies[origin]
            if not policy.available:
                back.append(claim.url)
                pool.hold_host(claim.host, robots.retry_ttl, reason="robots.txt unavailable")
                continue
            if origin not in cached:
                delay = policy.crawl_delay(user_agent)
                if delay:
                    pool.set_host_delay(claim.host, delay)
                back.append(claim.url)  # robots.txt was this host's request: the page waits its turn
                continue
            if policy.allows(claim.url, user_agent):
                keep.append(claim)
            else:
                blocked.append(claim.url)
        if blocked:
            pool.fail_many(blocked, error="robots.txt")
            refused = set(blocked)
            outcomes = [(c.host, None, "robots.txt", 0) for c in claims if c.url in refused]
            record_outcomes(pool.redis, self.project.pool_name, outcomes, time.time())
        if back:
            pool.give_back(back)
        return keep

    def _record(self, claims: list[Claim], results: list[FetchResult]) -> None:
        """Links first, then pages, then statuses: a crash in between refetches, never loses."""
        project, pool, scope = self.project, self.pool, self.scope
        now = timezone.now()
        pages: list[dict[str, Any]] = []
        reports: list[tuple[str, int | None, str, float | None]] = []
        regular: dict[tuple[int, int], list[CanonicalUrl]] = defaultdict(list)
        hub_new: dict[str, int] = {}
        for claim, result in zip(claims, results, strict=True):
            parsed = ParsedPage()
            if result.is_html:
                parsed = parse_html(claim.url, result.body, result.headers.get("content-type", ""), self.rules)
            links = _in_scope(parsed.links, scope, claim.depth + 1)
            location = result.headers.get("location") if result.status and 300 <= result.status < 400 else None
            if location:
                links += _in_scope([urljoin(claim.url, location.strip())], scope, claim.depth)
            if claim.is_hub:
                hub_new[claim.url] = pool.add_many(links, priority=HUB_LINK_PRIORITY, depth=claim.depth + 1)
            else:
                regular[(claim.priority if location else 0, claim.depth + (0 if location else 1))].extend(links)
            pages.append(_page_dict(claim, result, parsed, len(links), now))
            reports.append((claim.url, result.status, result.error or parsed.error, result.retry_after))
        for (priority, depth), urls in regular.items():
            pool.add_many(urls, priority=priority, depth=depth)
        store_pages(pages, project)
        pool.set_status_many(reports)
        pool.redis.incrby(fetched_counter_key(project), len(pages))
        record_outcomes(
            pool.redis,
            project.pool_name,
            [(c.host, r.status, r.error, r.elapsed_ms) for c, r in zip(claims, results, strict=True)],
            time.time(),
        )
        for url, new in hub_new.items():
            Hub.objects.filter(project=project, url=url).update(last_fetched_at=now, last_new_urls=new)


def crawl_batch_run(*, project: Project, session: requests.Session | None = None) -> BatchOutcome:
    """Crawl one batch of ``project`` (a :class:`CrawlRun` of one batch)."""
    return CrawlRun(project, session=session).batch()


def _in_scope(links: list[str], scope: Scope, depth: int) -> list[CanonicalUrl]:
    kept = []
    for link in links:
        found = try_canonicalize(link)
        if found is not None and scope.allows(found.url, found.host, depth):
            kept.append(found)
    return kept


def _page_dict(claim: Claim, result: FetchResult, parsed: ParsedPage, outlinks: int, now) -> dict[str, Any]:
    fields: dict[str, Any] = dict(parsed.fields)
    return {
        "url": claim.url,
        "host": claim.host,
        "status_code": result.status,
        "error": (result.error or parsed.error)[:500],
        "content_type": result.content_type[:200],
        "size": result.size,
        "elapsed_ms": result.elapsed_ms,
        "depth": claim.depth,
        "is_hub": claim.is_hub,
        "title": parsed.title,
        "fields": fields,
        "body_sha1": result.sha1,
        "outlinks": outlinks,
        "fetched_at": now,
    }
