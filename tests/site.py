"""A generated multi-host web site on loopback addresses, with a log of every request it served.

Hosts are 127.0.0.11, .12, ... each on its own free port. Every host has a tree of pages, a deep
chain, 404s and a robots.txt; host 0 also has always-500 pages, redirects (and a loop), a hub
whose content changes, links out of scope and pages robots.txt forbids; the last host serves
hostile pages.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Hit:
    host: str
    path: str
    start: float
    end: float
    status: int
    aborted: bool = False  # the client hung up first; ``end`` is when the server noticed


def free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


class LoopbackSite:
    """``hosts`` tree hosts of ``pages`` pages each, plus one hostile host."""

    def __init__(self, *, hosts: int = 7, pages: int = 300, deep: int = 12, hub_versions: int = 3) -> None:
        self.tree_hosts = hosts
        self.pages = pages
        self.deep = deep
        self.hub_versions = hub_versions
        self.hits: list[Hit] = []
        self.lock = threading.Lock()
        self.hub_fetches = 0
        self.robots_fetches: dict[str, int] = {}
        self.servers: list[ThreadingHTTPServer] = []
        self.hosts: list[str] = []
        self.out_of_scope = f"127.0.0.99:{free_port('127.0.0.1')}"
        bomb = gzip.compress(b"\0" * (20 * 1024 * 1024), compresslevel=9)
        self.bomb = bomb

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> LoopbackSite:
        for index in range(self.tree_hosts + 1):
            address = f"127.0.0.{11 + index}"
            server = ThreadingHTTPServer((address, free_port(address)), self._handler(index))
            server.daemon_threads = True
            self.servers.append(server)
            self.hosts.append(f"{address}:{server.server_address[1]}")
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()

    @property
    def hostile_host(self) -> str:
        return self.hosts[-1]

    def url(self, host_index: int, path: str) -> str:
        return f"http://{self.hosts[host_index]}{path}"

    # -- content -----------------------------------------------------------------------

    def hub_news(self, version: int) -> list[int]:
        return list(range(2 * min(version, self.hub_versions)))

    def _page(self, index: int, path: str) -> tuple[int, dict[str, str], bytes]:
        html = "text/html; charset=utf-8"
        if path == "/robots.txt":
            return self._robots(index)
        if index == self.tree_hosts:
            return self._hostile(path)
        if path == "/":
            links = ["/p/0", "/deep/0"] + [f"http://{h}/" for h in self.hosts[: self.tree_hosts]]
            links.append(f"http://{self.out_of_scope}/elsewhere")
            if index == 0:
                links += ["/broken/0", "/broken/1", "/old/1", "/old/2", "/loop/a", "/private/1", "/private/2"]
            return 200, {"Content-Type": html}, _html(f"home {index}", links)
        if path.startswith("/p/"):
            i = int(path[3:])
            if i >= self.pages:
                return 404, {"Content-Type": html}, _html("not found", [])
            children = [f"/p/{c}" for c in range(10 * i + 1, 10 * i + 11) if c < self.pages]
            return 200, {"Content-Type": html}, _html(f"page {i}", [*children, f"/missing/{i % 5}", "/p/0"], i)
        if path.startswith("/deep/"):
            k = int(path[6:])
            nxt = [f"/deep/{k + 1}"] if k + 1 < self.deep else []
            return 200, {"Content-Type": html}, _html(f"deep {k}", nxt)
        if path.startswith("/news/"):
            return 200, {"Content-Type": html}, _html(f"news {path[6:]}", [])
        if index == 0:
            if path == "/hub":
                with self.lock:
                    self.hub_fetches += 1
                    version = self.hub_fetches
                return 200, {"Content-Type": html}, _html("hub", [f"/news/{n}" for n in self.hub_news(version)])
            if path.startswith("/broken/"):
                return 500, {"Content-Type": html}, _html("server error", [])
            if path == "/old/1":
                return 301, {"Location": "/p/5"}, b""
            if path == "/old/2":
                return 302, {"Location": f"http://{self.hosts[0]}/p/5"}, b""
            if path == "/loop/a":
                return 302, {"Location": "/loop/b"}, b""
            if path == "/loop/b":
                return 302, {"Location": "/loop/a"}, b""
        return 404, {"Content-Type": html}, _html("not found", [])

    def _robots(self, index: int) -> tuple[int, dict[str, str], bytes]:
        host = self.hosts[index]
        with self.lock:
            self.robots_fetches[host] = self.robots_fetches.get(host, 0) + 1
            first = self.robots_fetches[host] == 1
        if index == 0:
            return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private/\n"
        if index == 1 and first:
            return 503, {"Content-Type": "text/plain"}, b"try later"
        if index == 2:
            return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"
        return 404, {"Content-Type": "text/plain"}, b"no robots here"

    def _hostile(self, path: str) -> tuple[int, dict[str, str], bytes]:
        html = "text/html; charset=utf-8"
        if path == "/":
            links = ["/huge", "/bomb", "/slow", "/bad-utf8", "/binary", "/links", "/p/0"]
            return 200, {"Content-Type": html}, _html("hostile", links)
        if path == "/huge":
            return 200, {"Content-Type": html}, b"<html><body>" + b"x" * (2 * 1024 * 1024) + b"</body></html>"
        if path == "/bomb":
            return 200, {"Content-Type": html, "Content-Encoding": "gzip"}, self.bomb
        if path == "/bad-utf8":
            return 200, {"Content-Type": html}, b"<html><title>caf\xe9 \xff\xfe</title><a href='/p/1'>x</a></html>"
        if path == "/binary":
            return 200, {"Content-Type": "application/octet-stream"}, bytes(range(256)) * 64
        if path == "/links":
            return 200, {"Content-Type": html}, _html("links", [f"/many/{k}" for k in range(10_000)])
        if path.startswith("/p/"):
            return 200, {"Content-Type": html}, _html(path, [])
        return 404, {"Content-Type": html}, _html("not found", [])

    # -- serving -----------------------------------------------------------------------

    def _handler(self, index: int) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                start = time.monotonic()
                status = 200
                aborted = False
                try:
                    if index == site.tree_hosts and self.path == "/slow":
                        status = self._drip()
                    else:
                        status, headers, body = site._page(index, self.path)
                        send(self, status, headers, body)
                except (BrokenPipeError, ConnectionResetError):
                    aborted = True  # the crawler gave up on this response, as it should for hostile pages
                finally:
                    with site.lock:
                        site.hits.append(Hit(site.hosts[index], self.path, start, time.monotonic(), status, aborted))

            def _drip(self) -> int:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                for _ in range(15000):  # 30 s at most
                    self.wfile.write(b"<p>")
                    self.wfile.flush()
                    time.sleep(0.002)
                return 200

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    # -- reading the log ---------------------------------------------------------------

    def count(self, host_index: int, path: str) -> int:
        host = self.hosts[host_index]
        return sum(1 for h in self.hits if h.host == host and h.path == path)

    def paths(self, host_index: int) -> list[str]:
        host = self.hosts[host_index]
        return [h.path for h in self.hits if h.host == host]


def send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    """Write a whole response with its Content-Length."""
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _html(title: str, links: list[str], salt: int = 0) -> bytes:
    anchors = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    filler = f"<p>{'lorem ipsum ' * 20} {salt}</p>"
    return f"<html><head><title>{title}</title></head><body><ul>{anchors}</ul>{filler}</body></html>".encode()
