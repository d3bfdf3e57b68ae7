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


def page_rows(
    project: Project, *, after: int = 0, upto: int | None = None, chunk: int = CHUNK
) -> Iterator[list[dict[str, Any]]]:
    """Pages of ``project`` with ``after < id <= upto``, oldest first, one list per chunk."""
    last = after
    pages = Page.objects.filter(project=project)
    if upto is not None:
        pages = pages.filter(id__lte=upto)
    while True:
        rows = list(pages.filter(id__gt=last).order_by("id").values(*COLUMNS)[:chunk])
        if not rows:
            return
        yield rows
        last = rows[-1]["id"]


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    row = dict(row)
    row["fetched_at"] = row["fetched_at"].isoformat()
    return row


def _csv_line(writer: Any, buffer: io.StringIO, values: list[Any]) -> str:
    buffer.seek(0)
    buffer.truncate()
    writer.writerow(values)
    return buffer.getvalue()


def _lines(rows: list[dict[str, Any]], fmt: str, writer: Any, buffer: io.StringIO) -> Iterator[tuple[int, str]]:
    for row in rows:
        row = _jsonable(row)
        if fmt == "jsonl":
            yield row["id"], json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
        else:
            values = [json.dumps(row[c], ensure_ascii=False) if c == "fields" else row[c] for c in COLUMNS]
            yield row["id"], _csv_line(writer, buffer, values)


def export_lines(project: Project, fmt: str, *, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, str]]:
    """(page id, text line) pairs of the export; the last id is the cursor to resume after.

    CSV starts with its header line, paired with ``after``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if fmt == "csv":
        yield after, _csv_line(writer, buffer, list(COLUMNS))
    for rows in page_rows(project, after=after, upto=upto):
        yield from _lines(rows, fmt, writer, buffer)


def export_stream(project: Project, fmt: str, *, after: int = 0) -> tuple[Iterator[str], int]:
    """The export as text chunks (one per database chunk) and the cursor it will end with.

    The cursor is the newest page id when the export starts, so it is known before streaming
    (pages stored meanwhile come with the next pull); the last line repeats it.
    """
    newest = Page.objects.filter(project=project).order_by("-id").values_list("id", flat=True).first()
    cursor = max(after, newest or 0)

    def chunks() -> Iterator[str]:
        batch: list[str] = []
        for _, line in export_lines(project, fmt, after=after, upto=cursor):
            batch.append(line)
            if len(batch) >= CHUNK:
                yield "".join(batch)
                batch = []
        trailer = json.dumps({"cursor": cursor}) + "\n" if fmt == "jsonl" else f"#cursor,{cursor}\n"
        yield "".join(batch) + trailer

    return chunks(), cursor
