"""Django admin: projects with hubs and extraction rules inline, and the state actions."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from console import services
from console.models import ExtractionRule, Hub, Page, Project, ProjectState


class HubInline(admin.TabularInline):
    model = Hub
    extra = 1
    fields = ("url", "refresh_span", "enabled", "last_fetched_at", "last_new_urls")
    readonly_fields = ("last_fetched_at", "last_new_urls")


class ExtractionRuleInline(admin.TabularInline):
    model = ExtractionRule
    extra = 1


def _state_action(name: str, service: Callable[..., Project], label: str):
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        for project in queryset:
            try:
                service(project=project)
            except services.ProjectStateError as exc:
                modeladmin.message_user(request, str(exc), messages.WARNING)
            else:
                modeladmin.message_user(request, f"{project.name}: {project.state}", messages.SUCCESS)

    action.__name__ = f"{name}_projects"
    return admin.action(description=label)(action)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "state", "state_reason", "concurrency", "crawl_delay", "created_at")
    list_filter = ("state",)
    search_fields = ("name",)
    readonly_fields = ("state", "state_reason", "started_at", "finished_at", "created_at")
    inlines = [HubInline, ExtractionRuleInline]
    fieldsets = (
        (None, {"fields": ("name", "owner", "seeds", "state", "state_reason", "started_at", "finished_at")}),
        (
            "Scope",
            {
                "fields": (
                    "allowed_hosts",
                    "include_subdomains",
                    "include_patterns",
                    "exclude_patterns",
                    "max_depth",
                    "max_pages",
                )
            },
        ),
        ("Politeness", {"fields": ("crawl_delay", "max_in_flight_per_host", "obey_robots", "user_agent")}),
        ("Limits", {"fields": ("request_timeout", "max_page_bytes")}),
        (
            "Frontier",
            {"fields": ("failure_threshold", "pending_timeout", "batch_size", "hub_percent", "order", "concurrency")},
        ),
    )
    actions = [
        _state_action("start", services.project_start, "Start selected projects"),
        _state_action("pause", services.project_pause, "Pause selected projects"),
        _state_action("resume", services.project_resume, "Resume selected projects"),
        _state_action("stop", services.project_stop, "Stop selected projects"),
        "requeue_failed",
    ]

    @admin.action(description="Requeue failed URLs of selected projects")
    def requeue_failed(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        for project in queryset:
            count = services.project_requeue_failed(project=project)
            self.message_user(request, f"{project.name}: {count} failed URL(s) queued again", messages.SUCCESS)

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        project = form.instance
        if project.state in (ProjectState.RUNNING, ProjectState.PAUSED):
            services.project_hubs_sync(project=project)

    def delete_model(self, request: HttpRequest, obj: Project) -> None:
        services.project_delete(project=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        for project in queryset:
            services.project_delete(project=project)


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("url", "status_code", "error", "content_type", "size", "elapsed_ms", "fetched_at")
    list_filter = ("project", "status_code", "is_hub")
    search_fields = ("url", "title")
    readonly_fields = [f.name for f in Page._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
