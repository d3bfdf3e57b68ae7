"""RQ entry points of the crawl loop. Jobs take IDs, crawl one batch, and queue their successor.

A project runs ``concurrency`` chains of jobs ("slots"). Each chain ends when the project leaves
the running state or a newer run (``run_generation``) has replaced it, so pausing and resuming
never doubles the chains.
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


def enqueue_batches(project_id: int, generation: int, count: int) -> None:
    """Start ``count`` chains for a run of a project."""
    for slot in range(count):
        enqueue_batch(project_id, generation, slot)


def enqueue_batch(project_id: int, generation: int, slot: int) -> None:
    django_rq.get_queue(QUEUE).enqueue(
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
    enqueue_batch(project_id, generation, slot)
    return f"fetched {fetched}"


def _still_current(project_id: int, generation: int) -> bool:
    return Project.objects.filter(pk=project_id, state=ProjectState.RUNNING, run_generation=generation).exists()


def restart_chain_after_failure(job, connection, exc_type, exc_value, traceback) -> None:
    """A batch raised: log it and keep the chain alive (its URLs come back when their leases end)."""
    project_id, generation, slot = job.args
    logger.error("crawl batch of project %s failed: %s: %s", project_id, exc_type.__name__, exc_value)
    if _current(project_id, generation) is not None:
        time.sleep(MAX_WAIT)
        enqueue_batch(project_id, generation, slot)
