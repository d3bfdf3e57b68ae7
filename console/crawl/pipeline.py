"""What happens to a fetched page: user steps named in ``CRAWL_PIPELINES``, then storage.

A step is a plain callable ``step(page: dict, project) -> dict | None`` (None keeps the page as
it is). A failing step is logged and noted on the page; it never loses the page or stops the crawl.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from console.models import Page, Project

logger = logging.getLogger(__name__)

Step = Callable[[dict[str, Any], Project], dict[str, Any] | None]


def pipeline_steps() -> list[Step]:
    """The configured steps, imported by dotted path (read on each call: settings may change)."""
    return [import_string(path) for path in getattr(settings, "CRAWL_PIPELINES", [])]


def run_steps(page: dict[str, Any], project: Project, steps: list[Step]) -> dict[str, Any]:
    for step in steps:
        try:
            changed = step(page, project)
        except Exception as exc:  # user code: any failure is recorded, never fatal
            name = getattr(step, "__qualname__", repr(step))
            logger.exception("pipeline step %s failed on %s", name, page.get("url"))
            page.setdefault("fields", {}).setdefault("_pipeline_errors", []).append(f"{name}: {exc}"[:500])
            continue
        if changed is not None:
            page = changed
    return page


def store_pages(pages: list[dict[str, Any]], project: Project) -> list[Page]:
    """Run the steps on each page, then store them all in one INSERT."""
    steps = pipeline_steps()
    fields = {f.name for f in Page._meta.concrete_fields} - {"id", "project"}
    rows = [
        Page(project=project, **{k: v for k, v in run_steps(p, project, steps).items() if k in fields}) for p in pages
    ]
    return Page.objects.bulk_create(rows, batch_size=500)
