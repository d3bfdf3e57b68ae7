"""Test fixtures: a real redis-server owned by the test session, one flushed DB per test.

Set TEST_REDIS_URL (e.g. redis://127.0.0.1:6380) to use a running server instead; its DB 15 is
used, and the session refuses to start if that DB holds data (it is never DB 0 of a stranger).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

TEST_DB = 15


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_redis(workdir: Path) -> tuple[subprocess.Popen, str]:
    binary = os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
    if binary is None:
        pytest.exit("redis-server is not installed: run the README's test command, or set TEST_REDIS_URL", 2)
    port = _free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(workdir),
            "--save",
            "",
            "--appendonly",
            "no",
            "--databases",
            "16",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            return proc, url
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.exit(f"redis-server did not start on port {port}", 2)
            time.sleep(0.05)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (no DB) of a Redis this session may flush."""
    external = os.environ.get("TEST_REDIS_URL")
    if external:
        client = redis.Redis.from_url(f"{external.rstrip('/')}/{TEST_DB}")
        if client.dbsize():
            pytest.exit(f"{external} DB {TEST_DB} holds data; refusing to run tests on it", 2)
        yield external.rstrip("/")
        return
    proc, url = _start_redis(tmp_path_factory.mktemp("redis"))
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server: str, settings) -> Iterator[str]:
    """URL of a flushed Redis DB for this test; the frontier's default client points at it."""
    url = f"{redis_server}/{TEST_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    settings.FRONTIER_REDIS_URL = url
    settings.REDIS_URL = url
    settings.RQ_QUEUES = {name: {"URL": url, "DEFAULT_TIMEOUT": 600} for name in ("crawl", "default")}
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def redis_client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url)
