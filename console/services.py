"""Writes on projects that the admin, the CLI, the API and the jobs share: the state machine."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from console.models import Hub, Project, ProjectState
from frontier.canonical import canonicalize, try_canonicalize
from frontier.pool import UrlPool

logger = logging.getLogger(__name__)

# action -> (states it may start from, state it leads to)
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "start": (frozenset({ProjectState.NEW}), ProjectState.RUNNING),
    "pause": (frozenset({ProjectState.RUNNING}), ProjectState.PAUSED),
    "resume": (frozenset({ProjectState.PAUSED}), ProjectState.RUNNING),
    "stop": (frozenset({ProjectState.RUNNING, ProjectState.PAUSED}), ProjectState.STOPPED),
    "finish": (frozenset({ProjectState.RUNNING}), ProjectState.FINISHED),
}


class ProjectStateError(Exception):
    """An action the project's current state does not allow; the message says why."""


def pool_for(project: Project) -> UrlPool:
    """The frontier pool of ``project``, configured from its knobs."""
    return UrlPool(
        project.pool_name,
        failure_threshold=project.failure_threshold,
        pending_timeout=project.pending_timeout,
        crawl_delay=project.crawl_delay,
        max_in_flight_per_host=project.max_in_flight_per_host,
        order=project.order,
    )


def _transition(project: Project, action: str, *, reason: str = "") -> Project:
    """Move ``project`` along ``action`` under a row lock; refuse illegal moves with a message."""
    sources, target = TRANSITIONS[action]
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        if locked.state not in sources:
            allowed = " or ".join(sorted(sources))
            raise ProjectStateError(
                f"cannot {action} project {locked.name!r}: it is {locked.state} (only a {allowed} project can)"
            )
        locked.state = target
        locked.state_reason = reason
        now = timezone.now()
        if action == "start":
            locked.started_at = now
        if target in (ProjectState.STOPPED, ProjectState.FINISHED):
            locked.finished_at = now
        if target == ProjectState.RUNNING:
            locked.run_generation += 1
        locked.save(update_fields=["state", "state_reason", "started_at", "finished_at", "run_generation"])
    project.refresh_from_db()
    logger.info("project %s: %s -> %s %s", project.name, action, target, reason)
    return project


def project_hubs_sync(*, project: Project) -> None:
    """Give the project's pool exactly its enabled hubs, each with its own refresh span."""
    hubs = {hub.url: hub.refresh_span for hub in project.hubs.filter(enabled=True)}
    pool_for(project).set_hubs(list(hubs), hubs)


def project_seeds_add(*, project: Project, urls: Iterable[str]) -> dict[str, str]:
    """Queue seed URLs at depth 0; per URL: "queued", "duplicate" or "rejected: <reason>"."""
    from frontier.canonical import InvalidUrl

    pool = pool_for(project)
    result: dict[str, str] = {}
    for url in urls:
        try:
            canonicalize(url)
        except InvalidUrl as exc:
            result[url] = f"rejected: {exc.reason}"
            continue
        result[url] = "queued" if pool.add(url, priority=10) else "duplicate"
    return result


def _enqueue_chains(project: Project) -> None:
    from console.crawl.jobs import enqueue_batches

    generation, timeout = project.run_generation, project.request_timeout
    transaction.on_commit(lambda: enqueue_batches(project.pk, generation, project.concurrency, timeout))


def project_start(*, project: Project) -> Project:
    """Start a new project: hubs and seeds into its frontier, ``concurrency`` batch jobs queued."""
    project = _transition(project, "start")
    project_hubs_sync(project=project)
    project_seeds_add(project=project, urls=project.seed_list)
    _enqueue_chains(project)
    return project


def project_pause(*, project: Project) -> Project:
    """Stop taking new batches; fetches in flight finish and are recorded."""
    return _transition(project, "pause")


def project_resume(*, project: Project) -> Project:
    project = _transition(project, "resume")
    project_hubs_sync(project=project)
    _enqueue_chains(project)
    return project


def project_stop(*, project: Project) -> Project:
    """End the crawl for good (the frontier is kept, for inspection and export)."""
    return _transition(project, "stop", reason="stopped by operator")


def project_finish(*, project: Project, reason: str) -> Project:
    return _transition(project, "finish", reason=reason)


def project_revive_chains(*, project: Project) -> int:
    """Restart the batch jobs of a running project whose worker died; returns how many."""
    from console.crawl.jobs import revive_dead_chains

    if project.state != ProjectState.RUNNING:
        raise ProjectStateError(f"cannot restart the jobs of project {project.name!r}: it is {project.state}")
    return revive_dead_chains(project)


def project_delete(*, project: Project) -> None:
    """Delete a project and purge its frontier pool."""
    from console.crawl.stats import purge_stats

    pool = pool_for(project)
    project.delete()
    pool.purge()
    purge_stats(pool.redis, pool.name)


def project_requeue_failed(*, project: Project, host: str | None = None, outcome: str | None = None) -> int:
    """Queue the project's failed URLs again (one host's, one outcome class's); returns how many."""
    from console.dashboard import failure_urls
    from frontier.models import UrlRecord, UrlState

    pool = pool_for(project)
    if host and outcome:
        urls = [r.url for r in failure_urls(project, host, outcome, limit=100_000) if r.state == UrlState.FAILED]
    else:
        rows = UrlRecord.objects.filter(pool__name=project.pool_name, state=UrlState.FAILED)
        urls = list((rows.filter(host=host) if host else rows).values_list("url", flat=True))
    return sum(pool.add(url, always=True) for url in urls)


def url_requeue(*, project: Project, url: str) -> bool:
    """Queue one URL again, done or not yet seen; False if it is already waiting or in flight."""
    pool = pool_for(project)
    return pool.add(url, always=True)


def hub_set_refresh_span(*, hub: Hub, refresh_span: str | float) -> Hub:
    """Change a hub's refresh span (validated like the admin form) and reschedule it."""
    from django.core.exceptions import ValidationError

    try:
        hub.refresh_span = float(refresh_span)
    except (TypeError, ValueError):
        raise ValidationError(f"Refresh span must be a number of seconds (got {refresh_span!r}).") from None
    hub.clean()
    hub.save(update_fields=["refresh_span"])
    if hub.project.state in (ProjectState.RUNNING, ProjectState.PAUSED):
        project_hubs_sync(project=hub.project)
    return hub


def hub_scope_hosts(project: Project) -> list[str]:
    """Hosts of the project's seeds and hubs (the default scope)."""
    urls = project.seed_list + list(Hub.objects.filter(project=project).values_list("url", flat=True))
    return sorted({c.host for c in map(try_canonicalize, urls) if c is not None})
