"""SQL rows of the frontier: the durable truth of every URL a pool knows."""

from __future__ import annotations

from django.db import models


class Pool(models.Model):
    """A named frontier (one per crawl project); its URLs live in :class:`UrlRecord`."""

    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "frontier_pool"

    def __str__(self) -> str:
        return self.name


class UrlState(models.TextChoices):
    # "pending" is never stored: a lease lives in Redis only, and a lost lease means "waiting".
    WAITING = "waiting", "waiting"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class UrlRecord(models.Model):
    """One URL of one pool, unique on (pool, fingerprint of the canonical URL)."""

    # No FK index of its own: every index below starts with the pool.
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="urls", db_index=False)
    fingerprint = models.CharField(max_length=32)
    url = models.TextField()
    host = models.CharField(max_length=300)
    depth = models.PositiveIntegerField(default=0)
    priority = models.IntegerField(default=0)
    state = models.CharField(max_length=10, choices=UrlState.choices, default=UrlState.WAITING)
    attempts = models.PositiveIntegerField(default=0, help_text="fetch outcomes reported so far")
    last_status = models.IntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    is_hub = models.BooleanField(default=False)
    refresh_span = models.FloatField(null=True, blank=True, help_text="seconds, hubs only")
    discovered_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    fetched_at = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True, help_text="retry not before")

    class Meta:
        db_table = "frontier_url"
        constraints = [
            models.UniqueConstraint(fields=["pool", "fingerprint"], name="frontier_url_unique"),
        ]
        # No index holds the state: a report, the hot write, then touches only the row itself.
        # Per-state counts live in Redis counters, not in SQL scans.
        indexes = [
            models.Index(fields=["pool", "host"], name="frontier_url_host"),
            models.Index(fields=["pool", "id"], name="frontier_url_pool_id"),
        ]

    def __str__(self) -> str:
        return self.url
