"""Show times in the operator's own time zone, as their browser reports it (cookie ``tz``)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


class OperatorTimezoneMiddleware:
    """Activate the time zone named by the ``tz`` cookie (set by the console's pages); ignore junk."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        name = request.COOKIES.get("tz", "")
        try:
            timezone.activate(zoneinfo.ZoneInfo(name)) if name else timezone.deactivate()
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            timezone.deactivate()
        return self.get_response(request)
