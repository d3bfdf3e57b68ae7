"""Settings from the environment, and the start-up check that Redis is reachable."""

from pathlib import Path

import pytest

from console.env import ConfigurationError, database_from_url, env_bool, env_list
from frontier.checks import check_redis_reachable


def test_sqlite_url_relative_and_absolute():
    base = Path("/srv/console")
    assert database_from_url("sqlite:///db.sqlite3", base)["NAME"] == "/srv/console/db.sqlite3"
    assert database_from_url("sqlite:////var/lib/c.db", base)["NAME"] == "/var/lib/c.db"
    assert database_from_url("sqlite:///db.sqlite3", base)["ENGINE"] == "django.db.backends.sqlite3"


def test_postgres_url():
    db = database_from_url("postgres://crawl:s%40cret@db.internal:5433/console?sslmode=require", Path("/"))
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "console",
        "crawl",
        "s@cret",
        "db.internal",
        "5433",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}


def test_unknown_database_scheme_is_explained():
    with pytest.raises(ConfigurationError, match="DATABASE_URL must start with sqlite:// or postgres://"):
        database_from_url("mysql://x/y", Path("/"))


def test_env_bool_and_list(monkeypatch):
    monkeypatch.setenv("X_FLAG", "yes")
    assert env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ConfigurationError, match="X_FLAG must be true or false"):
        env_bool("X_FLAG", False)
    monkeypatch.setenv("X_HOSTS", "a.example, b.example,")
    assert env_list("X_HOSTS", []) == ["a.example", "b.example"]


def test_redis_check_passes_when_reachable(redis_url):
    assert check_redis_reachable() == []


def test_redis_check_fails_with_a_fix_it_message(settings):
    settings.FRONTIER_REDIS_URL = "redis://127.0.0.1:1/0"
    [error] = check_redis_reachable()
    assert error.id == "frontier.E001"
    assert "Cannot reach Redis at redis://127.0.0.1:1/0" in error.msg
    assert "REDIS_URL" in error.hint


def test_manage_check_fails_when_redis_is_down(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, REDIS_URL="redis://127.0.0.1:1/0", DATABASE_URL=f"sqlite:///{tmp_path}/x.sqlite3")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "frontier.E001" in done.stderr
