"""Reads that the CLI, dashboard and API share: a project's numbers, computed one way."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from console.models import Page, Project
from console.services import pool_for


def projects_visible_to(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    """Staff see every project; others their own and those shared with one of their groups."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(Q(owner=user) | Q(shared_with__in=user.groups.all())).distinct()


def project_status(*, project: Project) -> dict[str, Any]:
    """State and counters of a project (frontier counters from Redis; pages per minute from SQL)."""
    stats = pool_for(project).stats()
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
        "hubs": stats["hubs"],
        "pages": Page.objects.filter(project=project).count(),
        "pages_per_minute": Page.objects.filter(project=project, fetched_at__gte=minute_ago).count(),
    }
