"""RQ entry points of the crawl loop. Jobs take IDs, crawl one batch, and queue their successor.

A project runs ``concurrency`` chains of jobs ("slots"). Each chain ends when the project leaves
the running state or a newer run (``run_generation``) has replaced it, so pausing and resuming
never doubles the chains. Every chain keeps a heartbeat key alive; a chain whose worker died
(no heartbeat) is restarted by a sibling chain at the end of its slice, or by the operator.
"""

from __future__ import annotations

import contextlib
import logging
import time

import django_rq
from django.conf import settings
from rq import Callback

from console.crawl.loop import CrawlRun
from console.models import Project, ProjectState
from console.services import ProjectStateError, project_finish

logger = logging.getLogger(__name__)

QUEUE = "crawl"
MAX_WAIT = 2.0  # a chain with nothing due sleeps at most this long before looking again
MIN_WAIT = 0.05


def enqueue_batches(project_id: int, generation: int, count: int, request_timeout: float) -> None:
    """Start ``count`` chains for a run of a project."""
    for slot in range(count):
        enqueue_batch(project_id, generation, slot, request_timeout=request_timeout)


def heartbeat_key(project_id: int, slot: int) -> str:
    return f"console:chain:{project_id}:{slot}"


def heartbeat_ttl(request_timeout: float) -> int:
    """Long enough for a queued job, a whole slice and its slowest batch (deadline 3 x timeout)."""
    return int(settings.CRAWL_JOB_SLICE + MAX_WAIT + 3 * request_timeout + 60)


def revive_dead_chains(project: Project) -> int:
    """Queue a job for every slot of a running project whose chain has no heartbeat.

    ``SET NX`` on the heartbeat decides: of several revivers, one restarts a dead slot.
    """
    if project.state != ProjectState.RUNNING:
        return 0
    client = django_rq.get_queue(QUEUE).connection
    revived = 0
    for slot in range(project.concurrency):
        ttl = heartbeat_ttl(project.request_timeout)
        if client.set(heartbeat_key(project.pk, slot), project.run_generation, ex=ttl, nx=True):
            logger.warning("project %s: chain %d had no heartbeat; restarting it", project.name, slot)
            enqueue_batch(project.pk, project.run_generation, slot, request_timeout=project.request_timeout)
            revived += 1
    return revived


def enqueue_batch(project_id: int, generation: int, slot: int, *, request_timeout: float) -> None:
    queue = django_rq.get_queue(QUEUE)
    queue.connection.set(heartbeat_key(project_id, slot), generation, ex=heartbeat_ttl(request_timeout))
    queue.enqueue(
        crawl_batch,
        project_id,
        generation,
        slot,
        job_timeout=3600,
        result_ttl=0,
        failure_ttl=7 * 86400,
        on_failure=Callback(restart_chain_after_failure),
    )


def _current(project_id: int, generation: int) -> Project | None:
    project = Project.objects.filter(pk=project_id).first()
    if project is None or project.state != ProjectState.RUNNING or project.run_generation != generation:
        return None
    return project


def crawl_batch(project_id: int, generation: int, slot: int) -> str:
    """Crawl batches of a running project for a time slice, then queue the chain's next job.

    A slice of several batches shares one :class:`CrawlRun` (pool, scope, rules), so the job's
    fixed costs are paid once per slice; the project's state is checked between batches, so a
    pause or stop takes effect after the batch in flight.
    """
    project = _current(project_id, generation)
    if project is None:
        return "chain ended: project not running this generation"
    run = CrawlRun(project)
    run.pool.redis.set(heartbeat_key(project_id, slot), generation, ex=heartbeat_ttl(project.request_timeout))
    slice_ends = time.monotonic() + settings.CRAWL_JOB_SLICE
    fetched = 0
    while True:
        outcome = run.batch()
        fetched += outcome.fetched
        if outcome.finished_reason:
            # Another chain may have finished it, or the operator paused it, meanwhile.
            with contextlib.suppress(ProjectStateError):
                project_finish(project=project, reason=outcome.finished_reason)
            return outcome.finished_reason
        if outcome.wait > 0:
            time.sleep(min(max(outcome.wait, MIN_WAIT), MAX_WAIT))
        if not _still_current(project_id, generation):
            return f"fetched {fetched}; chain ended"
        if time.monotonic() >= slice_ends:
            break
    enqueue_batch(project_id, generation, slot, request_timeout=project.request_timeout)
    revive_dead_chains(project)
    return f"fetched {fetched}"


def _still_current(project_id: int, generation: int) -> bool:
    return Project.objects.filter(pk=project_id, state=ProjectState.RUNNING, run_generation=generation).exists()


def restart_chain_after_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """A batch raised: log it and keep the chain alive (its URLs come back when their leases end)."""
    project_id, generation, slot = job.args
    logger.error("crawl batch of project %s failed: %s: %s", project_id, exc_type.__name__, exc_value)
    project = _current(project_id, generation)
    if project is not None:
        time.sleep(MAX_WAIT)
        enqueue_batch(project_id, generation, slot, request_timeout=project.request_timeout)
