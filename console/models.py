"""Crawl projects, their hubs and extraction rules, and the pages they fetched."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from frontier.canonical import try_canonicalize
from frontier.validators import validate_crawlable_url

DEFAULT_USER_AGENT = "CrawlConsole/0.1 (+http://localhost/contact)"


def validate_url_lines(value: str) -> None:
    """Every non-empty line is a crawlable URL; the error names the line and the reason."""
    errors = []
    for number, line in enumerate(value.splitlines(), 1):
        if line.strip():
            try:
                validate_crawlable_url(line.strip())
            except ValidationError as exc:
                errors.append(f"line {number}: {exc.messages[0]}")
    if errors:
        raise ValidationError(errors)


def validate_regex_lines(value: str) -> None:
    """Every non-empty line compiles as a Python regular expression."""
    errors = []
    for number, line in enumerate(value.splitlines(), 1):
        if line.strip():
            try:
                re.compile(line.strip())
            except re.error as exc:
                errors.append(f"line {number}: invalid regular expression ({exc})")
    if errors:
        raise ValidationError(errors)


def validate_regex(value: str) -> None:
    """One regular expression that compiles (a field holding a single pattern)."""
    validate_regex_lines(value)


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def min_refresh_span() -> float:
    return float(getattr(settings, "CRAWL_MIN_REFRESH_SPAN", 60.0))


class ProjectState(models.TextChoices):
    NEW = "new", "new"
    RUNNING = "running", "running"
    PAUSED = "paused", "paused"
    STOPPED = "stopped", "stopped"
    FINISHED = "finished", "finished"


class QueueOrder(models.TextChoices):
    FIFO = "fifo", "first in, first out (breadth first)"
    LIFO = "lifo", "last in, first out (depth first)"


class Project(models.Model):
    """A crawl: what to fetch (seeds, scope), how politely, and where it stands."""

    name = models.SlugField(max_length=100, unique=True, help_text="letters, digits, - and _")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    shared_with = models.ManyToManyField(
        "auth.Group", blank=True, related_name="shared_projects", help_text="groups whose members see the project"
    )
    seeds = models.TextField(blank=True, validators=[validate_url_lines], help_text="one URL per line")
    # scope
    allowed_hosts = models.TextField(blank=True, help_text="one host per line; empty: the seeds' and hubs' hosts")
    include_subdomains = models.BooleanField(default=False)
    include_patterns = models.TextField(
        blank=True, validators=[validate_regex_lines], help_text="regexes, one per line; a URL must match one"
    )
    exclude_patterns = models.TextField(
        blank=True, validators=[validate_regex_lines], help_text="regexes, one per line; a URL matching one is left out"
    )
    max_depth = models.PositiveIntegerField(default=5, help_text="links followed from a seed")
    max_pages = models.PositiveIntegerField(null=True, blank=True, help_text="stop after this many fetches")
    # politeness
    crawl_delay = models.FloatField(default=1.0, validators=[MinValueValidator(0.0), MaxValueValidator(600.0)])
    max_in_flight_per_host = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])
    obey_robots = models.BooleanField(default=True)
    user_agent = models.CharField(max_length=300, default=DEFAULT_USER_AGENT)
    # limits
    request_timeout = models.FloatField(default=30.0, validators=[MinValueValidator(0.1), MaxValueValidator(600.0)])
    max_page_bytes = models.PositiveIntegerField(default=5 * 1024 * 1024, validators=[MinValueValidator(1024)])
    # frontier knobs
    failure_threshold = models.PositiveSmallIntegerField(default=3, validators=[MaxValueValidator(20)])
    pending_timeout = models.FloatField(default=300.0, validators=[MinValueValidator(1.0)])
    batch_size = models.PositiveSmallIntegerField(default=50, validators=[MinValueValidator(1), MaxValueValidator(500)])
    hub_percent = models.PositiveSmallIntegerField(default=20, validators=[MaxValueValidator(100)])
    order = models.CharField(max_length=4, choices=QueueOrder.choices, default=QueueOrder.FIFO)
    concurrency = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(64)], help_text="batches in flight"
    )
    # state
    state = models.CharField(max_length=10, choices=ProjectState.choices, default=ProjectState.NEW, editable=False)
    state_reason = models.CharField(max_length=200, blank=True, editable=False)
    run_generation = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def pool_name(self) -> str:
        return f"project-{self.pk}"

    @property
    def seed_list(self) -> list[str]:
        return lines(self.seeds)


class Hub(models.Model):
    """An index page re-fetched every ``refresh_span`` seconds to discover fresh links."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="hubs")
    url = models.CharField(max_length=2000, validators=[validate_crawlable_url])
    refresh_span = models.FloatField(default=3600.0, help_text="seconds between fetches")
    enabled = models.BooleanField(default=True)
    last_fetched_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_new_urls = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "url"], name="console_hub_unique")]

    def __str__(self) -> str:
        return self.url

    def save(self, *args, **kwargs) -> None:
        found = try_canonicalize(self.url)
        if found is not None:
            self.url = found.url  # the frontier reports hubs by canonical URL
        super().save(*args, **kwargs)

    def clean(self) -> None:
        low = min_refresh_span()
        if self.refresh_span is not None and not low <= self.refresh_span <= 30 * 86400:
            raise ValidationError({"refresh_span": f"Refresh span must be between {low:g} s and 30 days."})


class ExtractionRule(models.Model):
    """A field extracted from pages: a CSS or XPath expression, optionally only on matching URLs."""

    class Kind(models.TextChoices):
        CSS = "css", "CSS"
        XPATH = "xpath", "XPath"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rules")
    field = models.SlugField(max_length=100)
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.CSS)
    expression = models.CharField(max_length=1000)
    url_pattern = models.CharField(max_length=1000, blank=True, validators=[validate_regex])
    multiple = models.BooleanField(default=False, help_text="keep every match, not just the first")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "field"], name="console_rule_unique")]

    def __str__(self) -> str:
        return f"{self.field}: {self.expression}"

    def clean(self) -> None:
        from parsel import Selector
        from parsel.csstranslator import HTMLTranslator

        try:
            if self.kind == self.Kind.CSS:
                HTMLTranslator().css_to_xpath(self.expression)
            else:
                Selector(text="<html></html>").xpath(self.expression)
        except Exception as exc:  # noqa: BLE001  (cssselect and lxml raise many kinds; all mean "invalid")
            raise ValidationError({"expression": f"Invalid {self.get_kind_display()} expression: {exc}"}) from None


class Page(models.Model):
    """One fetch outcome: what came back, and what was extracted from it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="pages", db_index=False)
    url = models.TextField()
    host = models.CharField(max_length=300)
    status_code = models.IntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    content_type = models.CharField(max_length=200, blank=True)
    size = models.PositiveIntegerField(default=0)
    elapsed_ms = models.PositiveIntegerField(default=0)
    depth = models.PositiveIntegerField(default=0)
    is_hub = models.BooleanField(default=False)
    title = models.CharField(max_length=1000, blank=True)
    fields = models.JSONField(default=dict, blank=True)
    body_sha1 = models.CharField(max_length=40, blank=True)
    outlinks = models.PositiveIntegerField(default=0)
    fetched_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "id"], name="console_page_project_id"),
            models.Index(fields=["project", "fetched_at"], name="console_page_fetched"),
        ]

    def __str__(self) -> str:
        return f"{self.status_code or self.error} {self.url}"
