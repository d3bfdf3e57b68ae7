"""Reads that the CLI, dashboard and API share: a project's numbers, computed one way."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from console.crawl.stats import fetched_counter_key, stats_prefix
from console.models import Page, Project
from console.services import pool_for


def projects_visible_to(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    """Staff see every project; others their own and those shared with one of their groups."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(Q(owner=user) | Q(shared_with__in=user.groups.all())).distinct()


def project_status(*, project: Project, pool_stats: dict[str, int] | None = None) -> dict[str, Any]:
    """State and counters of a project: the numbers the CLI, the API and the dashboard all show.

    Counters come from Redis, kept as the crawl runs (no COUNT over the URL or page tables);
    pages per minute is a range read on the (project, fetched_at) index. ``pool_stats`` lets a
    caller that already read the frontier's counters pass them in.
    """
    pool = pool_for(project)
    stats = pool.stats() if pool_stats is None else pool_stats
    pipe = pool.redis.pipeline(transaction=False)
    pipe.get(fetched_counter_key(project))
    pipe.hget(stats_prefix(project.pool_name) + "sc", "robots")
    pages, robots_blocked = pipe.execute()
    minute_ago = timezone.now() - timedelta(minutes=1)
    return {
        "name": project.name,
        "state": project.state,
        "reason": project.state_reason,
        "waiting": stats["waiting"],
        "pending": stats["pending"],
        "succeeded": stats["succeeded"],
        "failed": stats["failed"],
        "retrying": stats["retrying"],
        "robots_blocked": int(robots_blocked or 0),
        "hubs": stats["hubs"],
        "pages": int(pages or 0),
        "pages_per_minute": Page.objects.filter(project=project, fetched_at__gte=minute_ago).count(),
    }
