"""System checks: fail start-up with a fix-it message when the frontier's Redis is unreachable."""

from __future__ import annotations

import redis
from django.core.checks import Error, register

from frontier.conf import get_redis, setting


@register("redis")
def check_redis_reachable(app_configs=None, **kwargs) -> list[Error]:
    url = setting("REDIS_URL")
    try:
        get_redis(url).ping()
    except redis.RedisError as exc:
        return [
            Error(
                f"Cannot reach Redis at {url} ({exc}).",
                hint="Start redis-server, or set REDIS_URL to a reachable redis:// URL.",
                id="frontier.E001",
            )
        ]
    return []
