"""Frontier settings, read lazily so that ``override_settings`` works, and the Redis client."""

from __future__ import annotations

import os
from typing import Any

import redis
from django.conf import settings

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "KEY_PREFIX": "frontier",
    "BACKOFF_BASE": 30.0,
    "BACKOFF_MAX": 3600.0,
}

_clients: dict[tuple[int, str], redis.Redis] = {}


def setting(name: str) -> Any:
    """``FRONTIER_<NAME>`` from Django settings, else the default (``REDIS_URL`` falls back too)."""
    value = getattr(settings, f"FRONTIER_{name}", None)
    if value is None and name == "REDIS_URL":
        value = getattr(settings, "REDIS_URL", None)
    return DEFAULTS[name] if value is None else value


def get_redis(url: str | None = None) -> redis.Redis:
    """A client for ``url`` (default: the setting), one per process so forks never share sockets."""
    url = url or setting("REDIS_URL")
    key = (os.getpid(), url)
    client = _clients.get(key)
    if client is None:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, health_check_interval=30)
        _clients[key] = client
    return client
