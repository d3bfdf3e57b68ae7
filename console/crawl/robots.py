"""robots.txt: fetched once per origin, cached in Redis with a TTL, parsed with Protego."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import redis
import requests
from protego import Protego

from console.crawl.fetch import FetchLimits, fetch

logger = logging.getLogger(__name__)

ALLOW_ALL = "allow-all"
UNAVAILABLE = "unavailable"
MAX_CRAWL_DELAY = 60.0


@dataclass(frozen=True)
class RobotsPolicy:
    """What robots.txt says for one origin; ``available`` False means "ask again later"."""

    available: bool
    parser: Protego | None = None

    def allows(self, url: str, user_agent: str) -> bool:
        return self.parser is None or self.parser.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return None if delay is None else min(float(delay), MAX_CRAWL_DELAY)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class RobotsCache:
    """robots.txt per origin, shared by every worker through Redis."""

    def __init__(self, client: redis.Redis, *, ttl: int = 86400, retry_ttl: int = 60, prefix: str = "robots") -> None:
        self.client = client
        self.ttl = ttl
        self.retry_ttl = retry_ttl
        self.prefix = prefix

    def key(self, origin: str) -> str:
        return f"{self.prefix}:{origin}"

    def policy(self, origin: str, session: requests.Session, limits: FetchLimits) -> RobotsPolicy:
        cached = self.client.get(self.key(origin))
        if cached is None:
            cached = self._fetch(origin, session, limits)
        text = cached.decode("utf-8", "replace")
        if text == UNAVAILABLE:
            return RobotsPolicy(available=False)
        if text == ALLOW_ALL:
            return RobotsPolicy(available=True)
        return RobotsPolicy(available=True, parser=Protego.parse(text))

    def _fetch(self, origin: str, session: requests.Session, limits: FetchLimits) -> bytes:
        result = fetch(session, origin + "/robots.txt", limits)
        if result.status is not None and 200 <= result.status < 300 and not result.truncated:
            value, ttl = result.body or ALLOW_ALL.encode(), self.ttl
        elif result.status is not None and 300 <= result.status < 500:
            value, ttl = ALLOW_ALL.encode(), self.ttl  # no robots.txt (or unreadable): all allowed
        else:
            logger.info("robots.txt of %s unavailable (%s): holding the host", origin, result.status or result.error)
            value, ttl = UNAVAILABLE.encode(), self.retry_ttl
        self.client.set(self.key(origin), value, ex=ttl)
        return value
