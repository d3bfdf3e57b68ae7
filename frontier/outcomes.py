"""What an HTTP status means for a URL: done for good, or worth another try."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRY = "retry"


RETRYABLE_4XX = frozenset({408, 429})
# Statuses after which the whole host should slow down, not just the URL.
HOST_BACKOFF_STATUSES = frozenset({429, 503})


def classify(status_code: int | None) -> Outcome:
    """2xx and 3xx succeed; 404, 410 and other 4xx (but 408, 429) fail; the rest is retried.

    ``None`` means no response came (timeout, DNS, refused): retried like a 5xx.
    """
    if status_code is None:
        return Outcome.RETRY
    if not isinstance(status_code, int) or not 100 <= status_code <= 599:
        raise ValueError(f"not an HTTP status code: {status_code!r}")
    if 200 <= status_code < 400:
        return Outcome.SUCCEEDED
    if 400 <= status_code < 500 and status_code not in RETRYABLE_4XX:
        return Outcome.FAILED
    return Outcome.RETRY


def backoff_seconds(failures: int, *, base: float, maximum: float) -> float:
    """Exponential backoff before retry number ``failures`` (1 for the first retry)."""
    return min(maximum, base * 2 ** max(0, failures - 1))
