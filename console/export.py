"""Stream a project's pages as JSON lines or CSV in constant memory (keyset pages by id)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from console.models import Page, Project

FORMATS = ("jsonl", "csv")
COLUMNS = (
    "id",
    "url",
    "host",
    "status_code",
    "error",
    "content_type",
    "size",
    "elapsed_ms",
    "depth",
    "is_hub",
    "title",
    "fields",
    "body_sha1",
    "outlinks",
    "fetched_at",
)
CHUNK = 2000


def page_rows(project: Project, *, after: int = 0, chunk: int = CHUNK) -> Iterator[dict[str, Any]]:
    """Every page of ``project`` with an id above ``after``, oldest first, a chunk at a time."""
    last = after
    while True:
        rows = list(Page.objects.filter(project=project, id__gt=last).order_by("id").values(*COLUMNS)[:chunk])
        if not rows:
            return
        yield from rows
        last = rows[-1]["id"]


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    row = dict(row)
    row["fetched_at"] = row["fetched_at"].isoformat()
    return row


def export_lines(project: Project, fmt: str, *, after: int = 0) -> Iterator[tuple[int, str]]:
    """(page id, text line) pairs of the export; the last id is the cursor to resume after.

    CSV starts with its header line, paired with ``after``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if fmt == "csv":
        writer.writerow(COLUMNS)
        yield after, buffer.getvalue()
    for row in page_rows(project, after=after):
        row = _jsonable(row)
        if fmt == "jsonl":
            yield row["id"], json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
        else:
            buffer.seek(0)
            buffer.truncate()
            writer.writerow([json.dumps(row[c], ensure_ascii=False) if c == "fields" else row[c] for c in COLUMNS])
            yield row["id"], buffer.getvalue()
