"""Helpers the benchmarks share: a private redis-server, fresh databases, a served console."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(workdir: str) -> tuple[subprocess.Popen, str]:
    """A redis-server of the benchmark's own on a free loopback port (no persistence)."""
    binary = shutil.which("redis-server")
    if not binary:
        sys.exit("redis-server not found: apt-get install redis-server")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


def fresh_postgres_db(admin_url: str, name: str) -> str:
    """Drop and create database ``name`` on the server of ``admin_url``; return its URL."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


@contextmanager
def served_console(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen, int]]:
    """runserver (one process, no threads) on a free port, answering before this yields."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", "--nothreading", f"127.0.0.1:{port}"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        yield server, port
    finally:
        server.terminate()
        server.wait(timeout=10)


def on_each_database(prefix: str, postgres_url: str, run: Callable[[str, str, str], None]) -> None:
    """``run(name, database_url, redis_url)`` on SQLite, then on a fresh Postgres database if given."""
    workdir = tempfile.mkdtemp(prefix=f"{prefix}-")
    redis_proc, redis_url = start_redis(workdir)
    try:
        run("sqlite", f"sqlite:///{workdir}/{prefix}.sqlite3", redis_url)
        if postgres_url:
            redis.Redis.from_url(redis_url).flushdb()
            run("postgres", fresh_postgres_db(postgres_url, prefix.replace("-", "_")), redis_url)
        else:
            print("postgres: skipped (give --postgres-url or BENCH_POSTGRES_URL)")
    finally:
        redis_proc.terminate()
        redis_proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
