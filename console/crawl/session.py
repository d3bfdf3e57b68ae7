"""The HTTP session and fetch threads of one worker process, reused across batches.

Reuse keeps connections alive between batches (a batch holds one URL per host, so without it no
connection is ever reused). Both are rebuilt after a fork: a forked child never shares sockets.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import requests

from console.crawl.fetch import new_session

MAX_FETCH_THREADS = 128

_owner_pid: int | None = None
_session: requests.Session | None = None
_executor: ThreadPoolExecutor | None = None


def _ensure() -> None:
    global _owner_pid, _session, _executor
    if _owner_pid != os.getpid():
        _owner_pid = os.getpid()
        _session = new_session(pool_size=256)
        _executor = ThreadPoolExecutor(max_workers=MAX_FETCH_THREADS, thread_name_prefix="fetch")


def process_session() -> requests.Session:
    _ensure()
    assert _session is not None
    return _session


def process_executor() -> ThreadPoolExecutor:
    _ensure()
    assert _executor is not None
    return _executor
