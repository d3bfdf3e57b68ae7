"""What a project may crawl: its hosts, URL patterns and depth."""

from __future__ import annotations

import re
from dataclasses import dataclass

from console.models import Project, lines


@dataclass(frozen=True)
class Scope:
    hosts: frozenset[str]
    include_subdomains: bool
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    max_depth: int

    def allows_host(self, host: str) -> bool:
        """``host`` is a host key (``name`` or ``name:port``)."""
        if host in self.hosts:
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name in self.hosts:
            return True
        return self.include_subdomains and any(name.endswith("." + allowed) for allowed in self.hosts)

    def allows(self, url: str, host: str, depth: int) -> bool:
        if depth > self.max_depth or not self.allows_host(host):
            return False
        if self.include and not any(p.search(url) for p in self.include):
            return False
        return not any(p.search(url) for p in self.exclude)


def scope_for(project: Project) -> Scope:
    from console.services import hub_scope_hosts

    hosts = lines(project.allowed_hosts) or hub_scope_hosts(project)
    return Scope(
        hosts=frozenset(h.lower() for h in hosts),
        include_subdomains=project.include_subdomains,
        include=tuple(re.compile(p) for p in lines(project.include_patterns)),
        exclude=tuple(re.compile(p) for p in lines(project.exclude_patterns)),
        max_depth=project.max_depth,
    )
