"""Redis key names of a pool; all share one hash tag so a pool's scripts touch one cluster slot."""

from __future__ import annotations

from dataclasses import dataclass

# Order matters: scripts receive these as KEYS[1..n] in this order.
KEY_NAMES = (
    "turns",  # ZSET host -> turn number: hosts fetchable now, served lowest turn first
    "cooling",  # ZSET host -> time the host may be fetched again
    "pending",  # ZSET url id -> lease deadline
    "parked",  # HASH url id -> "host score" for leased and delayed URLs (to requeue them)
    "delayed",  # ZSET url id -> time a retry is due
    "hubs",  # ZSET hub url id -> time the hub is next due
    "hubinfo",  # HASH hub url id -> "host refresh_span"
    "inflight",  # HASH host -> leased URLs
    "nextok",  # HASH host -> earliest next fetch time
    "hostdelay",  # HASH host -> minimum delay between fetches (robots Crawl-delay)
    "why",  # HASH host -> why it waits ("crawl delay", "robots crawl-delay", "backoff")
    "stats",  # HASH counters
    "hosts",  # SET hosts that ever had a waiting queue (for rebuild and purge)
)


@dataclass(frozen=True)
class PoolKeys:
    """The key names of the pool called ``name`` under ``prefix``."""

    name: str
    prefix: str = "frontier"

    @property
    def base(self) -> str:
        return f"{self.prefix}:{{{self.name}}}"

    @property
    def queue_prefix(self) -> str:
        """Prefix of the per-host waiting queues: ZSET url id -> priority/arrival score."""
        return f"{self.base}:q:"

    def all(self) -> list[str]:
        return [f"{self.base}:{n}" for n in KEY_NAMES]

    def __getattr__(self, item: str) -> str:
        if item in KEY_NAMES:
            return f"{self.base}:{item}"
        raise AttributeError(item)
