"""The crawl loop's parts, one at a time: parse, robots.txt, fetch limits, scope, pipeline."""

from __future__ import annotations

import gzip
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from console.crawl.fetch import FetchLimits, fetch, new_session
from console.crawl.parse import Rule, parse_html
from console.crawl.pipeline import run_steps
from console.crawl.robots import RobotsCache, origin_of
from console.crawl.scope import Scope
from tests.site import send


def test_links_as_a_browser_follows_them():
    body = b"""<html><head><base href="/base/"><title> A  title </title></head><body>
      <a href="rel">rel</a> <a href="/abs">abs</a> <a href="http://other.example/x#frag">other</a>
      <area href="area"> <frame src="frame"> <iframe src="iframe"></iframe>
      <a href="#top">fragment only</a> <a>no href</a> <a href="  spaced  ">spaced</a>
      <a href="rel">duplicate</a> <img src="not-a-link.png">"""
    page = parse_html("http://site.example/dir/page", body, "text/html", [])
    assert page.title == "A title"
    assert page.links == [
        "http://site.example/base/rel",
        "http://site.example/abs",
        "http://other.example/x#frag",
        "http://site.example/base/area",
        "http://site.example/base/frame",
        "http://site.example/base/iframe",
        "http://site.example/base/spaced",
    ]


def test_broken_markup_and_odd_encodings_are_tolerated():
    latin1 = "<html><head><meta charset='iso-8859-1'><title>caf\xe9</title><a href=x>".encode("latin-1")
    assert parse_html("http://s.example/", latin1, "text/html", []).title == "caf\xe9"
    broken = b"<html><title>t</title><a href='/a'><div><a href=/b>b</a></p></span><table><td>\xff\xfe"
    page = parse_html("http://s.example/", broken, "text/html; charset=utf-8", [])
    assert page.links == ["http://s.example/a", "http://s.example/b"]
    assert parse_html("http://s.example/", b"   ", "text/html", []).links == []
    assert parse_html("http://s.example/", b"\x00\x01\x02binary", "text/html", []).error == ""


def test_extraction_rules_css_xpath_single_multiple_and_url_pattern():
    body = b"<html><h1>Head</h1><p class=price>10</p><p class=price>12</p><span id=sku>A-1</span></html>"
    rules = [
        Rule("heading", "css", "h1::text", None, False),
        Rule("prices", "css", "p.price::text", None, True),
        Rule("sku", "xpath", "//span[@id='sku']/text()", None, False),
        Rule("missing", "css", "h2::text", None, False),
        Rule("only_items", "css", "h1::text", re.compile(r"/item/"), False),
    ]
    page = parse_html("http://s.example/list", body, "text/html", rules)
    assert page.fields == {"heading": "Head", "prices": ["10", "12"], "sku": "A-1", "missing": None}


def test_scope_hosts_subdomains_patterns_and_depth():
    scope = Scope(
        hosts=frozenset({"example.com", "127.0.0.11:8000"}),
        include_subdomains=True,
        include=(re.compile(r"/news/|/$"),),
        exclude=(re.compile(r"\?print="),),
        max_depth=2,
    )
    assert scope.allows("http://example.com/news/1", "example.com", 2)
    assert scope.allows("http://www.example.com/news/1", "www.example.com", 1)
    assert scope.allows("http://example.com:8080/", "example.com:8080", 0)
    assert not scope.allows("http://example.com/news/1", "example.com", 3)
    assert not scope.allows("http://notexample.com/news/1", "notexample.com", 0)
    assert not scope.allows("http://example.com/shop/1", "example.com", 0)
    assert not scope.allows("http://example.com/news/1?print=1", "example.com", 0)
    assert scope.allows("http://127.0.0.11:8000/", "127.0.0.11:8000", 0)
    assert not scope.allows("http://127.0.0.11:9000/", "127.0.0.11:9000", 0)


def test_a_failing_pipeline_step_is_noted_and_the_page_kept():
    def boom(page, project):
        raise RuntimeError("step broke")

    def tag(page, project):
        return {**page, "title": page["title"] + " (tagged)"}

    page = run_steps({"url": "http://s.example/", "title": "t", "fields": {}}, project=None, steps=[boom, tag])
    assert page["title"] == "t (tagged)"
    assert page["fields"]["_pipeline_errors"][0].endswith("boom: step broke")


# -- fetch and robots.txt against a tiny loopback server ---------------------------------

ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/ok": (200, {"Content-Type": "text/html"}, b"<html>ok</html>"),
    "/bomb": (200, {"Content-Type": "text/html", "Content-Encoding": "gzip"}, gzip.compress(b"a" * 5_000_000)),
    "/moved": (301, {"Location": "/ok"}, b""),
    "/busy": (429, {"Retry-After": "7"}, b""),
    "/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /no/\nCrawl-delay: 120\n"),
}


@pytest.fixture(scope="module")
def server():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            send(self, *ROUTES.get(self.path, (404, {}, b"missing")))

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


LIMITS = FetchLimits(timeout=2, deadline=5, max_bytes=100_000, user_agent="test-agent")


def test_fetch_ok_redirect_retry_after_and_refused(server):
    session = new_session()
    ok = fetch(session, server + "/ok", LIMITS)
    assert (ok.status, ok.body, ok.is_html, ok.error) == (200, b"<html>ok</html>", True, "")
    moved = fetch(session, server + "/moved", LIMITS)
    assert (moved.status, moved.headers["location"], moved.body) == (301, "/ok", b"")
    busy = fetch(session, server + "/busy", LIMITS)
    assert (busy.status, busy.retry_after) == (429, 7.0)
    refused = fetch(session, "http://127.0.0.1:1/", LIMITS)
    assert (refused.status, refused.error) == (None, "connection refused")


def test_gzip_bomb_is_cut_after_decompression(server):
    bomb = fetch(new_session(), server + "/bomb", LIMITS)
    assert bomb.size == 100_000
    assert bomb.truncated
    assert bomb.error == "truncated at 100000 bytes"


def test_robots_policy_is_cached_and_caps_crawl_delay(server, redis_client):
    cache = RobotsCache(redis_client, ttl=60)
    policy = cache.policy(origin_of(server + "/x"), new_session(), LIMITS)
    assert policy.available
    assert not policy.allows(server + "/no/secret", "test-agent")
    assert policy.allows(server + "/yes", "test-agent")
    assert policy.crawl_delay("test-agent") == 60.0  # capped
    assert redis_client.ttl(f"robots:{server}") > 0
    again = cache.policy(origin_of(server + "/x"), session=None, limits=LIMITS)  # no fetch: cached
    assert not again.allows(server + "/no/secret", "test-agent")


def test_unreachable_robots_holds_and_404_allows(redis_client):
    cache = RobotsCache(redis_client, retry_ttl=5)
    down = cache.policy("http://127.0.0.1:1", new_session(), LIMITS)
    assert not down.available
    assert 0 < redis_client.ttl("robots:http://127.0.0.1:1") <= 5
