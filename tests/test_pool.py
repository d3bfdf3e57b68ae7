"""UrlPool semantics, one group per point of the frontier's contract, on real Redis and SQL."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from frontier.keys import PoolKeys
from frontier.models import UrlRecord
from frontier.pool import Claim, UrlPool
from tests.helpers import FakeClock

pytestmark = pytest.mark.django_db


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_pool(redis_client, clock):
    def make(name: str = "test-pool", **kwargs) -> UrlPool:
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("backoff_base", 10.0)
        return UrlPool(name, redis_client=redis_client, **kwargs)

    return make


@pytest.fixture
def pool(make_pool) -> UrlPool:
    return make_pool()


def urls_of(claims: list[Claim]) -> list[str]:
    return [c.url for c in claims]


def drain(pool: UrlPool, batch: int = 100, status: int = 200, rounds: int = 1000) -> list[str]:
    """Pop and report until nothing comes out; the popped URLs in order."""
    seen: list[str] = []
    for _ in range(rounds):
        claims = pool.pop(batch)
        if not claims:
            return seen
        seen += urls_of(claims)
        pool.set_status_many([(c.url, status, "") for c in claims])
    raise AssertionError("pool did not drain")


# 1. canonical URLs, as seen through add ------------------------------------------------


def test_add_rejects_uncrawlable_urls_and_counts_them(pool):
    assert pool.add("mailto:a@example.com") is False
    assert pool.add("javascript:void(0)") is False
    assert pool.add_many(["ftp://x.example/", "http:///", "http://a.example/ok"]) == 1
    assert pool.stats()["rejected"] == 4
    assert pool.size() == 1


def test_add_dedups_canonical_variants(pool):
    assert pool.add("http://A.example/p?b=2&a=1#top") is True
    assert pool.add("http://a.example:80/p?a=1&b=2") is False
    assert pool.add("http://a.example/x/../p?a=1&b=2") is False
    assert pool.size() == 1
    assert pool.stats()["duplicates"] == 2


# 2. dedup ------------------------------------------------------------------------------


def test_add_refuses_waiting_pending_and_permanent_urls(pool):
    assert pool.add("http://a.example/1")
    assert not pool.add("http://a.example/1")  # waiting
    [claim] = pool.pop(10)
    assert pool.state(claim.url) == "pending"
    assert not pool.add(claim.url)  # pending
    assert not pool.add(claim.url, always=True)  # live lease: never duplicated
    assert pool.set_status(claim.url, 200) == "succeeded"
    assert not pool.add(claim.url)  # permanent
    assert pool.size() == 0


def test_always_requeues_permanent_urls_once(pool):
    pool.add_many(["http://a.example/ok", "http://b.example/gone"])
    for claim in pool.pop(10):
        pool.set_status(claim.url, 200 if "ok" in claim.url else 404)
    assert pool.stats()["succeeded"] == 1 and pool.stats()["failed"] == 1
    assert pool.add("http://a.example/ok", always=True)
    assert not pool.add("http://a.example/ok", always=True)  # now waiting: not twice
    assert pool.add("http://b.example/gone", always=True)
    assert pool.size() == 2
    stats = pool.stats()
    assert stats["succeeded"] == 0 and stats["failed"] == 0
    assert sorted(urls_of(pool.pop(10))) == ["http://a.example/ok", "http://b.example/gone"]


def test_add_many_counts_new_urls_only(pool):
    urls = [f"http://h{i % 3}.example/{i}" for i in range(30)]
    assert pool.add_many(urls) == 30
    assert pool.add_many([*urls, "http://h0.example/new"]) == 1
    assert pool.size() == 31


# 3. pop --------------------------------------------------------------------------------


def test_pop_takes_one_url_per_host(pool):
    pool.add_many([f"http://h{h}.example/{i}" for h in range(3) for i in range(5)])
    claims = pool.pop(10)
    assert sorted(c.host for c in claims) == ["h0.example", "h1.example", "h2.example"]


def test_max_in_flight_per_host_holds_across_pops(make_pool):
    pool = make_pool(max_in_flight_per_host=2)
    pool.add_many([f"http://a.example/{i}" for i in range(5)])
    assert len(pool.pop(10)) == 1  # one per host per batch
    assert len(pool.pop(10)) == 1  # second lease allowed
    assert pool.pop(10) == []  # two in flight: host saturated
    assert pool.pending_count() == 2


def test_priority_first_then_fifo_within_a_host(make_pool):
    pool = make_pool(max_in_flight_per_host=10)
    pool.add("http://a.example/low1", priority=-1)
    pool.add("http://a.example/mid1")
    pool.add("http://a.example/high", priority=5)
    pool.add("http://a.example/mid2")
    pool.add("http://a.example/low2", priority=-1)
    order = drain(pool, batch=1)
    assert order == [f"http://a.example/{p}" for p in ("high", "mid1", "mid2", "low1", "low2")]


def test_lifo_order_within_a_priority(make_pool):
    pool = make_pool(order="lifo")
    pool.add_many([f"http://a.example/{i}" for i in range(3)])
    pool.add("http://a.example/urgent", priority=1)
    assert drain(pool, batch=1) == [f"http://a.example/{p}" for p in ("urgent", "2", "1", "0")]


def test_hosts_are_served_round_robin_in_exact_order(make_pool):
    pool = make_pool(max_in_flight_per_host=10)
    pool.add_many([f"http://{h}.example/{i}" for i in range(3) for h in "abc"])
    # Each host is served before any host is served twice, in the order hosts first had work.
    singles = [pool.pop(1)[0].url for _ in range(9)]
    assert singles == [f"http://{h}.example/{i}" for i in range(3) for h in "abc"]


def test_new_host_is_served_before_a_host_is_served_twice(make_pool):
    pool = make_pool(max_in_flight_per_host=10)
    pool.add_many(["http://a.example/1", "http://a.example/2", "http://b.example/1"])
    assert pool.pop(1)[0].url == "http://a.example/1"
    pool.add("http://c.example/1")
    assert [pool.pop(1)[0].url for _ in range(3)] == [
        "http://b.example/1",
        "http://a.example/2",
        "http://c.example/1",
    ]


def test_batches_are_fair_across_many_hosts(pool):
    pool.add_many([f"http://h{h:02d}.example/{i}" for h in range(20) for i in range(3)])
    served: list[str] = []
    for _ in range(6):
        claims = pool.pop(7)
        served += [c.host for c in claims]
        pool.set_status_many([(c.url, 200, "") for c in claims])
    counts = {h: served.count(h) for h in set(served)}
    # 42 URLs served over 20 hosts: nobody gets a third before everybody has had two.
    assert len(served) == 42
    assert sorted(counts.values()) == [2] * 18 + [3] * 2


def test_host_waits_crawl_delay_after_its_last_report(make_pool, clock):
    pool = make_pool(crawl_delay=5.0)
    pool.add_many(["http://a.example/1", "http://a.example/2", "http://b.example/1"])
    first = pool.pop(10)
    assert len(first) == 2
    pool.set_status_many([(c.url, 200, "") for c in first])
    assert pool.pop(10) == []
    assert pool.next_due_in() == pytest.approx(5.0)
    clock.advance(4.9)
    assert pool.pop(10) == []
    clock.advance(0.2)
    assert urls_of(pool.pop(10)) == ["http://a.example/2"]


def test_claim_carries_depth_priority_and_attempt(pool):
    pool.add("http://a.example/x", priority=3, depth=2)
    [claim] = pool.pop(1)
    assert claim == Claim("http://a.example/x", False, 2, 3, 1, "a.example")


# 4. leases -----------------------------------------------------------------------------


def test_unreported_urls_come_back_after_the_lease(make_pool, clock):
    pool = make_pool(pending_timeout=60)
    pool.add_many([f"http://h{i}.example/" for i in range(5)])
    dead_worker = pool.pop(10)
    assert len(dead_worker) == 5
    clock.advance(59)
    assert pool.pop(10) == []
    assert pool.state("http://h0.example/") == "pending"
    clock.advance(2)
    assert pool.state("http://h0.example/") == "waiting"
    back = pool.pop(10)
    assert sorted(urls_of(back)) == sorted(urls_of(dead_worker))
    assert pool.stats()["reclaimed"] == 5
    pool.set_status_many([(c.url, 200, "") for c in back])
    assert pool.stats()["succeeded"] == 5 and pool.size() == 0 and pool.pending_count() == 0


# 5. statuses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (200, "succeeded"),
        (204, "succeeded"),
        (301, "succeeded"),
        (304, "succeeded"),
        (404, "failed"),
        (410, "failed"),
        (403, "failed"),
        (400, "failed"),
        (408, "waiting"),
        (429, "waiting"),
        (500, "waiting"),
        (503, "waiting"),
        (None, "waiting"),
    ],
)
def test_status_codes_decide_the_state(pool, status, state):
    pool.add("http://a.example/x")
    [claim] = pool.pop(1)
    assert pool.set_status(claim.url, status, error="boom" if status is None else "") == state
    assert pool.state(claim.url) == state
    row = UrlRecord.objects.get(url=claim.url)
    assert (row.state, row.last_status, row.attempts) == (state, status, 1)


def test_bad_status_code_is_refused_before_anything_changes(pool):
    pool.add("http://a.example/x")
    [claim] = pool.pop(1)
    with pytest.raises(ValueError, match="not an HTTP status code"):
        pool.set_status(claim.url, 999)
    assert pool.state(claim.url) == "pending"


def test_retries_back_off_exponentially_then_fail(make_pool, clock):
    pool = make_pool(failure_threshold=3, backoff_base=10.0)
    pool.add("http://a.example/flaky")
    attempts = []
    waits = []
    for _ in range(10):
        claims = pool.pop(1)
        if not claims:
            due = pool.next_due_in()
            if due is None:
                break
            waits.append(due)
            clock.advance(due)
            continue
        attempts.append(claims[0].attempt)
        pool.set_status(claims[0].url, 500, error="server error")
    assert attempts == [1, 2, 3, 4]  # 1 + failure_threshold fetches
    assert waits == [10.0, 20.0, 40.0]
    assert pool.state("http://a.example/flaky") == "failed"
    assert pool.size() == 0 and pool.stats()["failed"] == 1


def test_retry_is_not_poppable_before_due_but_others_on_the_host_are(make_pool, clock):
    pool = make_pool(backoff_base=100.0)
    pool.add_many(["http://a.example/1", "http://a.example/2"])
    [first] = pool.pop(1)
    pool.set_status(first.url, None, error="timeout")
    assert pool.size() == 2 and pool.stats()["retrying"] == 1
    assert urls_of(pool.pop(1)) == ["http://a.example/2"]


def test_retry_after_is_honoured_and_holds_the_host(make_pool, clock):
    pool = make_pool(backoff_base=1.0)
    pool.add_many(["http://a.example/1", "http://a.example/2"])
    [claim] = pool.pop(1)
    assert pool.set_status(claim.url, 429, retry_after=120) == "waiting"
    assert pool.pop(10) == []  # the whole host backs off after a 429
    clock.advance(119)
    assert pool.pop(10) == []
    clock.advance(2)
    assert len(pool.pop(10)) == 1


def test_late_report_after_the_lease_was_reclaimed_is_idempotent(make_pool, clock):
    pool = make_pool(pending_timeout=10)
    pool.add("http://a.example/slow")
    [claim] = pool.pop(1)
    clock.advance(11)
    [again] = pool.pop(1)  # reclaimed and leased to another worker
    assert pool.set_status(again.url, 200) == "succeeded"
    assert pool.set_status(claim.url, 500) == "succeeded"  # the late report changes nothing
    assert pool.set_status(claim.url, 200) == "succeeded"
    assert pool.stats()["succeeded"] == 1
    assert pool.pending_count() == 0 and pool.size() == 0


def test_late_report_for_a_reclaimed_waiting_url_completes_it(make_pool, clock):
    pool = make_pool(pending_timeout=10)
    pool.add("http://a.example/slow")
    [claim] = pool.pop(1)
    clock.advance(11)
    assert pool.state(claim.url) == "waiting"
    assert pool.set_status(claim.url, 200) == "succeeded"
    assert pool.pop(10) == []
    assert pool.size() == 0 and pool.stats()["succeeded"] == 1


def test_report_for_unknown_url_says_unknown(pool):
    assert pool.set_status("http://never.example/", 200) == "unknown"
    assert pool.set_status("not a url", 200) == "unknown"


# 6. hubs -------------------------------------------------------------------------------


def test_hub_is_popped_when_due_and_never_twice_within_its_span(pool, clock):
    pool.set_hubs(["http://news.example/"], refresh_span=600)
    [claim] = pool.pop(10)
    assert claim.is_hub and claim.url == "http://news.example/"
    assert pool.set_status(claim.url, 200) == "waiting"  # never permanent
    clock.advance(599)
    assert pool.pop(10) == []
    clock.advance(2)
    [again] = pool.pop(10)
    assert again.is_hub and again.url == claim.url


def test_hubs_take_at_most_hub_percent_of_a_batch(pool):
    pool.set_hubs([f"http://hub{i}.example/" for i in range(10)], refresh_span=60)
    pool.add_many([f"http://page{i}.example/" for i in range(10)])
    claims = pool.pop(10, hub_percent=30)
    assert sum(c.is_hub for c in claims) == 3
    assert len(claims) == 10


def test_a_due_hub_gets_at_least_one_place(pool):
    pool.set_hubs(["http://hub.example/"], refresh_span=60)
    pool.add_many([f"http://page{i}.example/" for i in range(5)])
    claims = pool.pop(3, hub_percent=10)  # 3 * 10 // 100 == 0, but one hub is due
    assert [c.is_hub for c in claims].count(True) == 1
    assert len(claims) == 3


def test_hub_percent_zero_leaves_hubs_out(pool):
    pool.set_hubs(["http://hub.example/"], refresh_span=60)
    pool.add_many([f"http://page{i}.example/" for i in range(5)])
    claims = pool.pop(5, hub_percent=0)
    assert len(claims) == 5
    assert not any(c.is_hub for c in claims)


def test_hub_obeys_host_politeness(make_pool, clock):
    pool = make_pool(crawl_delay=10)
    pool.add("http://news.example/article")
    [page] = pool.pop(10)
    pool.set_hubs(["http://news.example/"], refresh_span=60)
    assert pool.pop(10) == []  # the host is busy with the article
    pool.set_status(page.url, 200)
    clock.advance(9)
    assert pool.pop(10) == []  # crawl delay
    clock.advance(2)
    [hub] = pool.pop(10)
    assert hub.is_hub


def test_adding_a_hub_url_as_a_regular_url_does_nothing(pool):
    pool.set_hubs(["http://news.example/"], refresh_span=60)
    assert pool.add("http://news.example/") is False
    assert pool.add("http://news.example/", always=True) is False
    assert pool.size() == 0
    assert len(pool.pop(10)) == 1


def test_set_hubs_replaces_and_keeps_schedules(pool, clock):
    pool.set_hubs(["http://a.example/", "http://b.example/"], refresh_span=100)
    for claim in pool.pop(10):
        pool.set_status(claim.url, 200)
    clock.advance(10)
    pool.set_hubs(["http://a.example/", "http://c.example/"], refresh_span=100)
    # a keeps its schedule (due in 90 s), b is now a plain fetched URL, c is new and due.
    assert urls_of(pool.pop(10)) == ["http://c.example/"]
    assert pool.state("http://b.example/") == "succeeded"
    assert pool.stats()["hubs"] == 2
    clock.advance(91)
    assert urls_of(pool.pop(10)) == ["http://a.example/"]


def test_hub_changes_keep_the_counters_exact(pool):
    pool.add_many(["http://a.example/", "http://b.example/"])
    for claim in pool.pop(10):
        pool.set_status(claim.url, 200)
    assert pool.stats()["succeeded"] == 2
    pool.set_hubs(["http://a.example/", "http://c.example/"], refresh_span=60)
    assert pool.stats()["succeeded"] == 1  # a is a hub now, never "done"
    for claim in pool.pop(10):
        pool.set_status(claim.url, 200)
    pool.set_hubs([], refresh_span=60)
    stats = pool.stats()
    assert (stats["succeeded"], stats["hubs"], stats["waiting"]) == (3, 0, 0)


def test_set_hubs_refuses_bad_input(pool):
    from frontier.canonical import InvalidUrl

    with pytest.raises(InvalidUrl):
        pool.set_hubs(["mailto:x@example.com"], refresh_span=60)
    with pytest.raises(ValueError, match="refresh span"):
        pool.set_hubs(["http://a.example/"], refresh_span=0)


# 7. durability -------------------------------------------------------------------------


def test_every_url_has_one_sql_row(pool):
    pool.add_many(["http://a.example/1", "http://A.example/1#x", "http://b.example/2"], depth=3, priority=2)
    rows = UrlRecord.objects.order_by("url")
    assert [(r.url, r.host, r.depth, r.priority, r.state) for r in rows] == [
        ("http://a.example/1", "a.example", 3, 2, "waiting"),
        ("http://b.example/2", "b.example", 3, 2, "waiting"),
    ]


def test_a_second_pool_object_sees_the_same_state(make_pool):
    one = make_pool()
    one.add("http://a.example/1")
    [claim] = one.pop(1)
    two = make_pool()
    assert two.state(claim.url) == "pending"
    assert two.add(claim.url) is False
    two.set_status(claim.url, 200)
    assert one.state(claim.url) == "succeeded"


def test_rebuild_after_redis_is_flushed(make_pool, redis_client, clock):
    pool = make_pool(backoff_base=50.0)
    pool.add_many([f"http://h{i}.example/{j}" for i in range(4) for j in range(3)])
    pool.set_hubs(["http://hub.example/"], refresh_span=100)
    claims = pool.pop(10)
    done = [c for c in claims if not c.is_hub][:2]
    flaky = [c for c in claims if not c.is_hub][2]
    pool.set_status_many([(c.url, 200, "") for c in done] + [(flaky.url, 503, "")])
    hub = next(c for c in claims if c.is_hub)
    pool.set_status(hub.url, 200)
    leased_then_lost = [c.url for c in claims if c not in done and c is not flaky and not c.is_hub]
    redis_client.flushdb()
    assert pool.size() == 0

    fresh = make_pool(backoff_base=50.0)
    assert fresh.rebuild() == 4 * 3 - 2 + 1  # waiting + the retry + the hub
    stats = fresh.stats()
    assert (stats["waiting"], stats["succeeded"], stats["retrying"], stats["hubs"]) == (10, 2, 1, 1)
    popped: list[str] = []
    for _ in range(50):
        batch = fresh.pop(10)
        popped += urls_of(batch)
        fresh.set_status_many([(c.url, 200, "") for c in batch])
        clock.advance(10)
    regular = [u for u in popped if u != "http://hub.example/"]
    assert sorted(regular) == sorted(
        {f"http://h{i}.example/{j}" for i in range(4) for j in range(3)} - {c.url for c in done}
    )
    assert set(leased_then_lost) <= set(regular)
    assert popped.count("http://hub.example/") >= 4  # due again every 100 s
    assert fresh.state(done[0].url) == "succeeded"


def test_rebuild_while_running_keeps_live_leases(pool):
    pool.add_many([f"http://h{i}.example/" for i in range(3)])
    leased = pool.pop(2)
    assert pool.rebuild() == 1
    assert len(pool.pop(10)) == 1
    assert pool.pop(10) == []
    assert pool.pending_count() == 3
    pool.set_status_many([(c.url, 200, "") for c in leased])
    assert pool.stats()["succeeded"] == 2


def test_pop_drops_ids_that_sql_says_are_done(pool, redis_client):
    pool.add("http://a.example/1")
    [claim] = pool.pop(1)
    # Simulate a crash between the SQL commit of a report and its Redis update.
    UrlRecord.objects.filter(url=claim.url).update(state="succeeded")
    redis_client.zadd(pool.keys.pending, {"0": 0})  # noise that must not break anything
    pool.rebuild()
    assert pool.pop(10) == []


def test_frontier_command_rebuild_stats_and_purge(pool, redis_client, capsys):
    pool.add_many(["http://a.example/1", "http://b.example/1"])
    redis_client.flushdb()
    call_command("frontier", "rebuild", "test-pool")
    assert "2 URL(s) scheduled" in capsys.readouterr().out
    call_command("frontier", "stats", "test-pool")
    assert '"waiting": 2' in capsys.readouterr().out
    call_command("frontier", "purge", "test-pool", "--yes")
    assert UrlRecord.objects.count() == 0
    assert redis_client.keys("frontier:{test-pool}*") == []


def test_frontier_command_refuses_unknown_pool_and_unconfirmed_purge(pool):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no pool named 'nope'"):
        call_command("frontier", "stats", "nope")
    pool.add("http://a.example/")
    with pytest.raises(CommandError, match="--yes"):
        call_command("frontier", "purge", "test-pool")


def test_purge_forgets_everything(pool, redis_client):
    pool.add_many([f"http://h{i}.example/" for i in range(5)])
    pool.set_hubs(["http://hub.example/"], 60)
    pool.pop(2)
    pool.purge()
    assert UrlRecord.objects.count() == 0
    assert redis_client.keys("*") == []
    assert pool.add("http://h0.example/") is True  # the pool can start over


# 8. Redis Cluster readiness ------------------------------------------------------------


def test_every_key_of_a_pool_shares_one_slot(pool, redis_client, clock):
    from redis.crc import key_slot

    pool.add_many([f"http://h{i}.example/{j}" for i in range(5) for j in range(2)])
    pool.set_hubs(["http://hub.example/"], 60)
    claims = pool.pop(10)
    pool.set_status_many([(c.url, 500, "") for c in claims])
    keys = redis_client.keys("*")
    assert len(keys) > 10
    assert {key_slot(k) for k in keys} == {key_slot(PoolKeys("test-pool").base.encode())}
    assert all(b"{test-pool}" in k for k in keys)


def test_pool_names_that_would_break_the_hash_tag_are_refused(redis_client):
    with pytest.raises(ValueError, match="pool name"):
        UrlPool("bad{name}", redis_client=redis_client)


# crawl-loop helpers --------------------------------------------------------------------


def test_fail_many_fails_for_good_without_a_status(pool):
    pool.add_many(["http://a.example/private", "http://b.example/private"])
    claims = pool.pop(10)
    pool.fail_many([c.url for c in claims], error="robots.txt")
    row = UrlRecord.objects.get(url="http://a.example/private")
    assert (row.state, row.last_status, row.last_error, row.attempts) == ("failed", None, "robots.txt", 1)
    assert pool.stats()["failed"] == 2
    assert pool.pending_count() == 0


def test_give_back_returns_urls_to_their_place_without_an_attempt(pool, clock):
    pool.add_many(["http://a.example/1", "http://a.example/2"])
    [first] = pool.pop(10)
    assert pool.give_back([first.url]) == 1
    pool.hold_host("a.example", 30, reason="robots.txt unavailable")
    assert pool.pop(10) == []
    clock.advance(31)
    [again] = pool.pop(10)
    assert (again.url, again.attempt) == (first.url, 1)
    assert pool.size() == 1
    assert pool.give_back([first.url, "http://never.example/"]) == 1


def test_host_snapshot_reports_queues_leases_and_holds(make_pool, clock):
    pool = make_pool(crawl_delay=30)
    pool.add_many(["http://a.example/1", "http://a.example/2", "http://b.example/1"])
    [_, b_claim] = sorted(pool.pop(10), key=lambda c: c.host)
    pool.set_status(b_claim.url, 200)
    snapshot = {s.host: s for s in pool.host_snapshot()}
    assert (snapshot["a.example"].waiting, snapshot["a.example"].leased, snapshot["a.example"].next_ok) == (1, 1, None)
    b = snapshot["b.example"]
    assert (b.waiting, b.leased, b.next_ok, b.why) == (0, 0, clock.now + 30, "crawl delay")
