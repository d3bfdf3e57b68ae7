"""Fetch one URL politely and defensively: timeouts, a total deadline, a size cap, no redirects."""

from __future__ import annotations

import hashlib
import time
import zlib
from dataclasses import dataclass, field

import requests
import urllib3
from urllib3.exceptions import ProtocolError, ReadTimeoutError

CHUNK = 64 * 1024


@dataclass
class FetchResult:
    url: str
    status: int | None = None
    error: str = ""
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    size: int = 0
    elapsed_ms: int = 0
    truncated: bool = False
    retry_after: float | None = None

    @property
    def sha1(self) -> str:
        return hashlib.sha1(self.body, usedforsecurity=False).hexdigest() if self.body else ""

    @property
    def is_html(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and "html" in self.content_type


@dataclass(frozen=True)
class FetchLimits:
    timeout: float  # connect and per-read timeout, seconds
    deadline: float  # whole request, seconds
    max_bytes: int  # decompressed body
    user_agent: str


def new_session(*, pool_size: int = 64) -> requests.Session:
    """A session with pooled connections and no automatic retries (the frontier retries)."""
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=pool_size, pool_maxsize=4, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _retry_after(value: str | None) -> float | None:
    if value and value.strip().isdigit():
        return min(float(value.strip()), 86400.0)
    return None


def fetch(session: requests.Session, url: str, limits: FetchLimits) -> FetchResult:
    """GET ``url``; never raises for network or server trouble (the result carries the error)."""
    result = FetchResult(url)
    start = time.monotonic()
    try:
        response = session.get(
            url,
            headers={"User-Agent": limits.user_agent, "Accept-Encoding": "gzip, deflate"},
            timeout=(limits.timeout, limits.timeout),
            allow_redirects=False,
            stream=True,
        )
    except requests.exceptions.ConnectTimeout:
        result.error = "timeout: connect"
    except requests.exceptions.ReadTimeout:
        result.error = "timeout: read"
    except requests.exceptions.ConnectionError as exc:
        result.error = _connection_error(exc)
    except (requests.exceptions.InvalidURL, requests.exceptions.InvalidHeader, ValueError) as exc:
        result.error = f"invalid request: {exc}"[:300]
    except requests.exceptions.RequestException as exc:
        result.error = f"request failed: {type(exc).__name__}"
    else:
        with response:
            _read(response, result, limits, start)
    result.elapsed_ms = int((time.monotonic() - start) * 1000)
    return result


def _connection_error(exc: Exception) -> str:
    text = str(exc)
    if "Name or service not known" in text or "NameResolutionError" in text or "getaddrinfo" in text:
        return "dns: lookup failed"
    if "Connection refused" in text or "Errno 111" in text:
        return "connection refused"
    if "timed out" in text:
        return "timeout: connect"
    return "connection error"


def _read(response: requests.Response, result: FetchResult, limits: FetchLimits, start: float) -> None:
    result.status = response.status_code
    result.headers = {k.lower(): v for k, v in response.headers.items()}
    result.content_type = result.headers.get("content-type", "").split(";")[0].strip().lower()
    result.retry_after = _retry_after(result.headers.get("retry-after"))
    if 300 <= response.status_code < 400:
        return  # the Location header is all we need
    chunks: list[bytes] = []
    size = 0
    raw = response.raw
    try:
        # read1 returns what has arrived, so the deadline is checked even when a server drips
        # bytes just fast enough to never trip the per-read timeout.
        while chunk := raw.read1(CHUNK, decode_content=True):
            size += len(chunk)
            if size > limits.max_bytes:
                chunks.append(chunk[: len(chunk) - (size - limits.max_bytes)])
                size = limits.max_bytes
                result.truncated = True
                result.error = f"truncated at {limits.max_bytes} bytes"
                break
            chunks.append(chunk)
            if time.monotonic() - start > limits.deadline:
                result.status = None
                result.error = f"timeout: deadline of {limits.deadline:g} s exceeded"
                break
    except (ReadTimeoutError, requests.exceptions.ReadTimeout):
        result.status, result.error = None, "timeout: read"
    except (ProtocolError, urllib3.exceptions.DecodeError, zlib.error, OSError) as exc:
        result.status, result.error = None, f"broken response: {type(exc).__name__}"
    result.body = b"".join(chunks)
    result.size = size
