"""Canonical URLs, host keys and fingerprints: what makes two URLs "the same" for the frontier."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

MAX_URL_LENGTH = 2000
ALLOWED_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}

# RFC 3986: characters that may stand unencoded in a path or query ('%' handled separately).
_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_SAFE_PATH = frozenset(_UNRESERVED + "!$&'()*+,;=:@/")
_SAFE_QUERY = frozenset(_UNRESERVED + "!$&'()*+,;=:@/?")
_SAFE_USERINFO = frozenset(_UNRESERVED + "!$&'()*+,;=:")
_HEX = frozenset("0123456789abcdefABCDEF")
_UNRESERVED_SET = frozenset(_UNRESERVED)
_HOST_OK = re.compile(r"[a-z0-9_.-]+\Z")
_IPV6_OK = re.compile(r"\[[0-9a-f:.]+\]\Z")
_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)")
_BAD_HOST_CHAR = re.compile(r"[\x00-\x20\x7f\s]")
# The common case, already canonical but for default port, empty path and dot-segments:
# lower-case http(s), a plain host, nothing to escape. Anything else takes the general path.
_FAST = re.compile(
    r"(https?)://([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::([0-9]{1,5}))?"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?(?:\?([A-Za-z0-9\-._~!$&'()*+,;=:@/?]*))?\Z"
)
_PLAIN_ASCII = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*\Z")


class InvalidUrl(ValueError):
    """A URL the frontier will not crawl; ``reason`` says why in words an operator understands."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{reason}: {url[:200]!r}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CanonicalUrl:
    """A crawlable URL in canonical form, with its politeness key and dedup fingerprint."""

    url: str
    host: str
    fingerprint: str


def _quote(text: str, safe: frozenset[str]) -> str:
    """Percent-encode what is unsafe, keep valid escapes (upper-cased), decode escaped unreserved."""
    if _PLAIN_ASCII.match(text) and "%" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED_SET else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if ch in safe:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, on an absolute path."""
    if "." not in path:
        return path
    segments = path.split("/")
    out: list[str] = []
    for seg in segments[1:]:
        if seg == "..":
            if out:
                out.pop()
        elif seg != ".":
            out.append(seg)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def _canonical_host(url: str, hostname: str) -> str:
    if not hostname:
        raise InvalidUrl(url, "no host")
    if _BAD_HOST_CHAR.search(hostname):
        raise InvalidUrl(url, "whitespace or control character in host")
    if hostname.startswith("["):
        if not _IPV6_OK.match(hostname):
            raise InvalidUrl(url, "invalid IPv6 host")
        return hostname
    host = hostname.rstrip(".")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise InvalidUrl(url, f"invalid international host name ({exc})") from None
    if not _HOST_OK.match(host) or ".." in host:
        raise InvalidUrl(url, "invalid host name")
    return host


def _sorted_query(query: str) -> str:
    if "&" not in query:
        return query
    return "&".join(sorted(p for p in query.split("&") if p))


def canonicalize(url: str) -> CanonicalUrl:
    """Return the canonical form of ``url``, or raise :class:`InvalidUrl` naming the reason.

    Scheme and host are lower-cased, IDN hosts become punycode, default ports, fragments and
    dot-segments go, unsafe characters are percent-encoded. The stored URL keeps its query order
    (servers may care); the fingerprint sorts the query so that reordered parameters dedup.
    """
    if not isinstance(url, str):
        raise InvalidUrl(repr(url), "not a string")
    raw = url.strip()
    if len(raw) > MAX_URL_LENGTH:
        raise InvalidUrl(raw, f"longer than {MAX_URL_LENGTH} characters")
    fast = _FAST.match(raw)
    if fast is not None and (fast[4] is None or "/." not in fast[4]):
        return _canonical_fast(raw, *fast.groups())
    authority = _AUTHORITY.match(raw)
    if authority and _BAD_HOST_CHAR.search(authority.group(1)):
        # urlsplit would silently drop tabs and newlines; a host with them is not a real host.
        raise InvalidUrl(raw, "whitespace or control character in host")
    try:
        parts = urlsplit(raw)
    except ValueError as exc:
        raise InvalidUrl(raw, f"malformed URL ({exc})") from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise InvalidUrl(raw, "not an absolute URL (no scheme)")
    if scheme not in ALLOWED_SCHEMES:
        raise InvalidUrl(raw, f"unsupported scheme {scheme!r}")
    netloc = parts.netloc
    userinfo, _, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        hostname, _, rest = hostport.partition("]")
        hostname += "]"
        port_text = rest[1:] if rest.startswith(":") else ""
        if rest and not rest.startswith(":"):
            raise InvalidUrl(raw, "invalid host")
    else:
        hostname, _, port_text = hostport.partition(":")
    host = _canonical_host(raw, hostname.lower())
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise InvalidUrl(raw, f"invalid port {port_text!r}")
        port = int(port_text)
        if port != DEFAULT_PORTS[scheme]:
            host = f"{host}:{port}"
    path = _remove_dot_segments(_quote(parts.path, _SAFE_PATH) or "/")
    if not path.startswith("/"):
        path = "/" + path
    query = _quote(parts.query, _SAFE_QUERY)
    prefix = f"{scheme}://{_quote(userinfo, _SAFE_USERINFO) + '@' if userinfo else ''}{host}{path}"
    canonical = f"{prefix}?{query}" if query else prefix
    if len(canonical) > MAX_URL_LENGTH:
        raise InvalidUrl(raw, f"longer than {MAX_URL_LENGTH} characters")
    dedup_key = f"{prefix}?{_sorted_query(query)}" if query else prefix
    return CanonicalUrl(canonical, host, fingerprint_of(dedup_key))


def _canonical_fast(
    raw: str, scheme: str, host: str, port: str | None, path: str | None, query: str | None
) -> CanonicalUrl:
    if port is not None:
        if not 0 < int(port) < 65536:
            raise InvalidUrl(raw, f"invalid port {port!r}")
        if int(port) != DEFAULT_PORTS[scheme]:
            host = f"{host}:{int(port)}"
    prefix = f"{scheme}://{host}{path or '/'}"
    if not query:
        return CanonicalUrl(prefix, host, fingerprint_of(prefix))
    return CanonicalUrl(f"{prefix}?{query}", host, fingerprint_of(f"{prefix}?{_sorted_query(query)}"))


def fingerprint_of(text: str) -> str:
    """A 128-bit hex fingerprint: short enough to index, wide enough never to collide in practice."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def try_canonicalize(url: str) -> CanonicalUrl | None:
    """Like :func:`canonicalize`, but ``None`` for a URL that is not crawlable."""
    try:
        return canonicalize(url)
    except InvalidUrl:
        return None


def host_of(url: str) -> str:
    """The politeness key (host, plus port when not the default) of a crawlable URL."""
    return canonicalize(url).host
