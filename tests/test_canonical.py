"""Canonical URLs: what counts as the same URL, and what is refused with which reason."""

import pytest

from frontier.canonical import InvalidUrl, canonicalize, host_of, try_canonicalize
from frontier.validators import validate_crawlable_url


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM/a", "http://example.com/a"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/../../a", "http://example.com/a"),
        ("http://example.com/a/b/..", "http://example.com/a/"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
        ("http://example.com/%7euser/%2f", "http://example.com/~user/%2F"),
        ("http://example.com/100%", "http://example.com/100%25"),
        ("http://example.com/?q=a b&x=<", "http://example.com/?q=a%20b&x=%3C"),
        ("http://b\u00fccher.example/", "http://xn--bcher-kva.example/"),
        ("http://example.com./x", "http://example.com/x"),
        ("  http://example.com/x  ", "http://example.com/x"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ],
)
def test_canonical_form(raw, expected):
    assert canonicalize(raw).url == expected


def test_query_order_does_not_matter_for_dedup_but_is_kept_for_fetching():
    a = canonicalize("http://example.com/p?b=2&a=1")
    b = canonicalize("http://example.com/p?a=1&b=2")
    assert a.fingerprint == b.fingerprint
    assert a.url == "http://example.com/p?b=2&a=1"


def test_different_urls_have_different_fingerprints():
    assert canonicalize("http://example.com/a").fingerprint != canonicalize("http://example.com/b").fingerprint
    assert canonicalize("http://example.com/a").fingerprint != canonicalize("https://example.com/a").fingerprint


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("mailto:someone@example.com", "unsupported scheme 'mailto'"),
        ("javascript:alert(1)", "unsupported scheme 'javascript'"),
        ("data:text/html,hi", "unsupported scheme 'data'"),
        ("ftp://example.com/file", "unsupported scheme 'ftp'"),
        ("/relative/path", "not an absolute URL (no scheme)"),
        ("http:///nohost", "no host"),
        ("http://exa mple.com/", "whitespace or control character in host"),
        ("http://exa\tmple.com/", "whitespace or control character in host"),
        ("http://exa\x01mple.com/", "whitespace or control character in host"),
        ("http://example.com:99999/", "invalid port '99999'"),
        ("http://ex!ample.com/", "invalid host name"),
        ("http://example.com/" + "a" * 2000, "longer than 2000 characters"),
    ],
)
def test_rejected_with_reason(raw, reason):
    with pytest.raises(InvalidUrl) as info:
        canonicalize(raw)
    assert info.value.reason == reason
    assert try_canonicalize(raw) is None


def test_host_key_keeps_non_default_port():
    assert host_of("http://127.0.0.11:8000/x") == "127.0.0.11:8000"
    assert host_of("https://Example.com:443/") == "example.com"


def test_form_validator_names_the_reason():
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as info:
        validate_crawlable_url("mailto:x@example.com")
    assert "unsupported scheme 'mailto'" in str(info.value)
    validate_crawlable_url("http://example.com/")


@pytest.mark.parametrize(
    "raw",
    [
        "http://example.com/a/b?x=1&y=2",
        "http://example.com:80/a",
        "http://example.com:8080",
        "https://example.com:443/?",
        "http://example.com/a/./b/../c?q=1",
        "http://example.com/p?b=2&a=1&&c",
        "http://a-b.example.com/~x/y;z=1",
        "http://127.0.0.11:8000/page/1",
        "http://example.com:0/",
    ],
)
def test_fast_path_agrees_with_the_general_path(raw, monkeypatch):
    """Plain URLs take a shortcut; the result must equal the general algorithm's."""
    import re

    from frontier import canonical

    def outcome():
        try:
            return canonicalize(raw)
        except InvalidUrl as exc:
            return exc.reason

    fast = outcome()
    monkeypatch.setattr(canonical, "_FAST", re.compile(r"(?!)"))  # never matches: general path only
    assert outcome() == fast
