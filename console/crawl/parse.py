"""Parse fetched HTML: the links a browser would follow, the title, and rule-extracted fields."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import lxml.etree
import lxml.html
from parsel import Selector
from w3lib.encoding import html_to_unicode

logger = logging.getLogger(__name__)

LINK_ATTRS = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
MAX_LINKS = 20_000


@dataclass(frozen=True)
class Rule:
    field: str
    kind: str  # "css" | "xpath"
    expression: str
    url_pattern: re.Pattern[str] | None
    multiple: bool


@dataclass
class ParsedPage:
    title: str = ""
    links: list[str] = field(default_factory=list)
    fields: dict[str, object] = field(default_factory=dict)
    error: str = ""


def _origin(url: str) -> str | None:
    scheme, sep, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if sep and scheme in ("http", "https") else None


def _join(base: str, origin: str | None, href: str) -> str:
    """``urljoin``, with shortcuts for the common absolute forms (the frontier canonicalises after)."""
    if href.startswith(("http://", "https://")):
        return href
    if origin and href.startswith("/") and not href.startswith("//") and "\\" not in href:
        return origin + href
    return urljoin(base, href)


def parse_html(url: str, body: bytes, content_type_header: str, rules: list[Rule]) -> ParsedPage:
    """Links (absolute, ``<base href>`` honoured), title and fields; broken markup is tolerated."""
    page = ParsedPage()
    if not body.strip():
        return page
    _, text = html_to_unicode(content_type_header, body)
    try:
        root = lxml.html.document_fromstring(text.replace("\x00", ""))
    except (lxml.etree.ParserError, ValueError) as exc:
        page.error = f"unparsable HTML: {exc}"[:300]
        return page
    base = url
    base_el = root.find(".//base[@href]")
    if base_el is not None:
        base = urljoin(url, base_el.get("href", "").strip())
    origin = _origin(base)
    seen: set[str] = set()
    for element in root.iter(*LINK_ATTRS):
        raw = element.get(LINK_ATTRS[element.tag])
        if not raw:
            continue
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        try:
            link = _join(base, origin, raw)
        except ValueError:
            continue
        if link not in seen:
            seen.add(link)
            page.links.append(link)
            if len(page.links) >= MAX_LINKS:
                break
    title = root.findtext(".//title")
    page.title = " ".join(title.split())[:1000] if title else ""
    applicable = [r for r in rules if r.url_pattern is None or r.url_pattern.search(url)]
    if applicable:
        selector = Selector(root=root)
        for rule in applicable:
            found = selector.css(rule.expression) if rule.kind == "css" else selector.xpath(rule.expression)
            values = [v.strip() if isinstance(v, str) else v for v in found.getall()]
            page.fields[rule.field] = values if rule.multiple else (values[0] if values else None)
    return page
