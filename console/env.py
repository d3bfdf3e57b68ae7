"""Read deployment settings from the environment (12-factor style), with clear errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


class ConfigurationError(ValueError):
    """An environment variable holds a value the console cannot use."""


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigurationError(f"{name} must be true or false (got {raw!r})")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    return [item.strip() for item in raw.split(",") if item.strip()] if raw else default


def database_from_url(url: str, base_dir: Path) -> dict[str, Any]:
    """A Django DATABASES entry from ``sqlite:///path`` or ``postgres://user:pw@host:port/name``."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        raw = unquote(parts.path)
        # sqlite:///relative.db is relative to the project; sqlite:////abs/path.db is absolute.
        path = Path(raw[1:])
        name = path if path.is_absolute() else base_dir / path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(name),
            "OPTIONS": {
                # Writers queue for the lock at BEGIN instead of failing mid-transaction.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                # WAL lets readers run beside the writer; a bigger cache and rarer checkpoints
                # keep the frontier's batched writes cheap.
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                    " PRAGMA cache_size=-20000; PRAGMA wal_autocheckpoint=10000;"
                ),
            },
            "TEST": {"NAME": str(name.with_name(f"test_{name.name}"))},
        }
    if parts.scheme in ("postgres", "postgresql", "pgsql"):
        options = dict(parse_qsl(parts.query))
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(parts.port or ""),
            "OPTIONS": options,
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ConfigurationError(f"DATABASE_URL must start with sqlite:// or postgres:// (got {url!r})")
