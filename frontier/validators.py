"""Django validators for operator-facing forms: a refused URL is explained, not just refused."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from frontier.canonical import InvalidUrl, canonicalize


def validate_crawlable_url(value: str) -> None:
    """Raise ``ValidationError`` naming why ``value`` cannot be crawled."""
    try:
        canonicalize(value)
    except InvalidUrl as exc:
        raise ValidationError(
            "Not a crawlable URL: %(reason)s.", code="not_crawlable", params={"reason": exc.reason}
        ) from None
