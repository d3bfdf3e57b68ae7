"""Bulk SQL reads and writes of frontier rows, the same on SQLite and Postgres.

The hot paths (add, pop, report) use hand-written SQL: one statement per batch, no model
instances, so that the durable write costs about as much as the Redis one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connections

from frontier.models import Pool, UrlRecord, UrlState

TABLE = UrlRecord._meta.db_table
CHUNK = 500


@dataclass(frozen=True, slots=True)
class NewUrl:
    fingerprint: str
    url: str
    host: str
    depth: int
    priority: int


@dataclass(frozen=True, slots=True)
class StoredUrl:
    id: int
    fingerprint: str
    url: str
    host: str
    depth: int
    priority: int
    state: str
    attempts: int
    is_hub: bool


@dataclass(frozen=True, slots=True)
class OutcomeRow:
    id: int
    state: str
    attempts: int
    status: int | None
    error: str
    next_try_at: datetime | None


_COLUMNS = "id, fingerprint, url, host, depth, priority, state, attempts, is_hub"


def _chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _stored(row: Sequence[Any]) -> StoredUrl:
    return StoredUrl(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]))


def _in(using: str, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``column IN (...)`` as SQL and parameters (``= ANY(array)`` on Postgres: one parameter)."""
    if connections[using].vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


def adapt_time(when: datetime | None, using: str) -> Any:
    return connections[using].ops.adapt_datetimefield_value(when)


def pool_id_for(name: str, using: str) -> int:
    """The id of pool ``name``, created on first use."""
    pool, _ = Pool.objects.using(using).get_or_create(name=name)
    return pool.pk


def insert_new(pool_id: int, urls: Sequence[NewUrl], when: datetime, using: str) -> dict[str, int]:
    """Insert the URLs not yet known; return fingerprint -> id for those this call inserted.

    The unique (pool, fingerprint) index decides: a concurrent insert of the same URL by another
    process makes this one a no-op, so a URL is queued by exactly one caller.
    """
    stamp = adapt_time(when, using)
    inserted: dict[str, int] = {}
    with connections[using].cursor() as cursor:
        for chunk in _chunks(urls):
            values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, 0, '', %s, %s, %s)"] * len(chunk))
            params: list[Any] = []
            for u in chunk:
                params += [pool_id, u.fingerprint, u.url, u.host, u.depth, u.priority]
                params += [UrlState.WAITING, False, stamp, stamp]
            cursor.execute(
                f"INSERT INTO {TABLE} (pool_id, fingerprint, url, host, depth, priority, state,"
                f" attempts, last_error, is_hub, discovered_at, updated_at) VALUES {values}"
                f" ON CONFLICT (pool_id, fingerprint) DO NOTHING RETURNING id, fingerprint",
                params,
            )
            inserted.update((fp, pk) for pk, fp in cursor.fetchall())
    return inserted


def by_fingerprints(
    pool_id: int, fingerprints: Sequence[str], using: str, *, lock: bool = False
) -> dict[str, StoredUrl]:
    """Stored rows by fingerprint; ``lock`` takes row locks (Postgres) inside a transaction."""
    found: dict[str, StoredUrl] = {}
    suffix = " FOR UPDATE" if lock and connections[using].features.has_select_for_update else ""
    with connections[using].cursor() as cursor:
        for chunk in _chunks(list(fingerprints)):
            clause, params = _in(using, "fingerprint", chunk)
            cursor.execute(
                f"SELECT {_COLUMNS} FROM {TABLE} WHERE pool_id = %s AND {clause}{suffix}",
                [pool_id, *params],
            )
            for row in cursor.fetchall():
                found[row[1]] = _stored(row)
    return found


def by_ids(pool_id: int, ids: Sequence[int], using: str) -> dict[int, StoredUrl]:
    """Stored rows by id (the members of the Redis structures)."""
    found: dict[int, StoredUrl] = {}
    with connections[using].cursor() as cursor:
        for chunk in _chunks(list(ids)):
            clause, params = _in(using, "id", chunk)
            cursor.execute(
                f"SELECT {_COLUMNS} FROM {TABLE} WHERE pool_id = %s AND {clause}",
                [pool_id, *params],
            )
            for row in cursor.fetchall():
                found[row[0]] = _stored(row)
    return found


def write_outcomes(outcomes: Iterable[OutcomeRow], when: datetime, using: str) -> None:
    """Record reported fetch outcomes (one UPDATE per row by primary key, sent as one batch)."""
    stamp = adapt_time(when, using)
    params = [
        (o.state, o.attempts, o.status, o.error[:500], stamp, stamp, adapt_time(o.next_try_at, using), o.id)
        for o in outcomes
    ]
    if not params:
        return
    with connections[using].cursor() as cursor:
        cursor.executemany(
            f"UPDATE {TABLE} SET state = %s, attempts = %s, last_status = %s, last_error = %s,"
            f" updated_at = %s, fetched_at = %s, next_try_at = %s WHERE id = %s",
            params,
        )


def requeue_permanent(pool_id: int, fingerprint: str, when: datetime, using: str) -> str | None:
    """Make a succeeded or failed URL waiting again (forced re-crawl); return its old state.

    ``None`` when the URL is not permanent (or is a hub): the conditional UPDATE is the arbiter,
    so of several concurrent forced adds exactly one re-queues it.
    """
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"SELECT state FROM {TABLE} WHERE pool_id = %s AND fingerprint = %s AND NOT is_hub",
            [pool_id, fingerprint],
        )
        row = cursor.fetchone()
        if row is None or row[0] == UrlState.WAITING:
            return None
        cursor.execute(
            f"UPDATE {TABLE} SET state = %s, attempts = 0, next_try_at = NULL, updated_at = %s"
            f" WHERE pool_id = %s AND fingerprint = %s AND state = %s",
            [UrlState.WAITING, adapt_time(when, using), pool_id, fingerprint, row[0]],
        )
        return row[0] if cursor.rowcount == 1 else None


def delete_pool(pool_id: int, using: str) -> int:
    """Delete every row of a pool, and the pool, with two statements (no per-row cascade)."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE pool_id = %s", [pool_id])
        deleted = cursor.rowcount
        cursor.execute(f"DELETE FROM {Pool._meta.db_table} WHERE id = %s", [pool_id])
    return deleted


def make_hubs(hubs: Sequence[tuple[int, float]], when: datetime, using: str) -> None:
    """Flag rows as hubs with their refresh span; a hub is always "waiting" (never permanent)."""
    stamp = adapt_time(when, using)
    with connections[using].cursor() as cursor:
        cursor.executemany(
            f"UPDATE {TABLE} SET is_hub = %s, refresh_span = %s, state = %s, updated_at = %s WHERE id = %s",
            [(True, span, UrlState.WAITING, stamp, pk) for pk, span in hubs],
        )


def demote_hubs(pool_id: int, keep: set[int], when: datetime, using: str) -> list[tuple[int, str, int, bool]]:
    """Turn the pool's hubs not in ``keep`` into regular URLs: succeeded if ever fetched, else waiting.

    Returns (id, host, priority, was fetched) for each former hub.
    """
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"SELECT id, host, priority, fetched_at IS NOT NULL FROM {TABLE} WHERE pool_id = %s AND is_hub",
            [pool_id],
        )
        former = [(pk, host, prio, bool(fetched)) for pk, host, prio, fetched in cursor.fetchall() if pk not in keep]
        stamp = adapt_time(when, using)
        cursor.executemany(
            f"UPDATE {TABLE} SET is_hub = %s, refresh_span = NULL, state = %s, updated_at = %s WHERE id = %s",
            [(False, UrlState.SUCCEEDED if fetched else UrlState.WAITING, stamp, pk) for pk, _, _, fetched in former],
        )
    return former


def waiting_rows(pool_id: int, using: str, *, chunk: int = 2000) -> Iterator[list[UrlRecord]]:
    """Every waiting row of a pool, in id (arrival) order, a chunk at a time (keyset paging)."""
    last = 0
    fields = ("id", "host", "priority", "is_hub", "refresh_span", "fetched_at", "next_try_at")
    while True:
        rows = list(
            UrlRecord.objects.using(using)
            .filter(pool_id=pool_id, state=UrlState.WAITING, id__gt=last)
            .order_by("id")
            .only(*fields)[:chunk]
        )
        if not rows:
            return
        yield rows
        last = rows[-1].id


def count_by_state(pool_id: int, using: str) -> dict[str, int]:
    """Rows per state (a full count: for rebuild, not for dashboards)."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT state, COUNT(*) FROM {TABLE} WHERE pool_id = %s GROUP BY state", [pool_id])
        return {state: n for state, n in cursor.fetchall()}
