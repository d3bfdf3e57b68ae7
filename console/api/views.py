"""API views: thin over the services, selectors and export code the rest of the console uses."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.pagination import CursorPagination
from rest_framework.renderers import JSONRenderer, TemplateHTMLRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from console import services
from console.api.serializers import (
    ExtractionRuleSerializer,
    HubSerializer,
    PageSerializer,
    ProjectSerializer,
    SeedsSerializer,
    UrlRecordSerializer,
)
from console.export import FORMATS, export_stream
from console.models import Page, Project, ProjectState
from console.selectors import project_status, projects_visible_to
from frontier.models import UrlRecord

STATUS_CLASSES = {"1xx": (100, 200), "2xx": (200, 300), "3xx": (300, 400), "4xx": (400, 500), "5xx": (500, 600)}


class WriteRateThrottle(UserRateThrottle):
    """Rate-limits writes only (POST, PUT, PATCH, DELETE): reads stay free for dashboards."""

    scope = "write"

    def allow_request(self, request: Request, view: APIView) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)


class NewestFirstCursor(CursorPagination):
    """Stable cursors over ids; ``?order=oldest`` walks the other way."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_ordering(self, request: Request, queryset: QuerySet, view: APIView) -> tuple[str, ...]:
        return ("id",) if request.query_params.get("order") == "oldest" else ("-id",)


def visible_project(request: Request, project_id: int) -> Project:
    """The project if this user may see it; another user's project is a 404, never its data."""
    return get_object_or_404(projects_visible_to(request.user), pk=project_id)


class ProjectViewSet(viewsets.ModelViewSet):
    serializer_class = ProjectSerializer
    throttle_classes = [WriteRateThrottle]

    def get_queryset(self) -> QuerySet[Project]:
        return projects_visible_to(self.request.user).order_by("id")

    def perform_create(self, serializer: ProjectSerializer) -> None:
        serializer.save(owner=self.request.user)

    def perform_update(self, serializer: ProjectSerializer) -> None:
        project = serializer.save()
        if project.state in (ProjectState.RUNNING, ProjectState.PAUSED):
            services.project_hubs_sync(project=project)

    def perform_destroy(self, instance: Project) -> None:
        services.project_delete(project=instance)

    def _transition(self, name: str) -> Response:
        project = self.get_object()
        try:
            project = getattr(services, f"project_{name}")(project=project)
        except services.ProjectStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(project).data)

    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        return self._transition("start")

    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        return self._transition("pause")

    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        return self._transition("resume")

    @action(detail=True, methods=["post"])
    def stop(self, request: Request, pk: str | None = None) -> Response:
        return self._transition("stop")

    @action(detail=True, methods=["post"], serializer_class=SeedsSerializer)
    def seeds(self, request: Request, pk: str | None = None) -> Response:
        """Queue URLs in the project's frontier; per URL: queued, duplicate or rejected: reason."""
        project = self.get_object()
        serializer = SeedsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        results = services.project_seeds_add(project=project, urls=serializer.validated_data["urls"])
        return Response({"results": results})

    @action(detail=True, methods=["get"])
    def stats(self, request: Request, pk: str | None = None) -> Response:
        return Response(project_status(project=self.get_object()))


class ProjectChildViewSet(viewsets.ModelViewSet):
    """Hubs or rules of one project (nested under it)."""

    throttle_classes = [WriteRateThrottle]

    def project(self) -> Project:
        if not hasattr(self, "_project"):
            self._project = visible_project(self.request, self.kwargs["project_pk"])
        return self._project

    def get_queryset(self) -> QuerySet:
        return self.serializer_class.Meta.model.objects.filter(project=self.project()).order_by("id")

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if "project_pk" in self.kwargs:  # absent while the OpenAPI schema is generated
            context["project"] = self.project()
        return context

    def perform_create(self, serializer) -> None:
        serializer.save(project=self.project())
        self._sync()

    def perform_update(self, serializer) -> None:
        serializer.save()
        self._sync()

    def perform_destroy(self, instance) -> None:
        instance.delete()
        self._sync()

    def _sync(self) -> None:
        """Running projects pick up hub changes at once (rules at the next job slice)."""


class HubViewSet(ProjectChildViewSet):
    serializer_class = HubSerializer

    def _sync(self) -> None:
        project = self.project()
        if project.state in (ProjectState.RUNNING, ProjectState.PAUSED):
            services.project_hubs_sync(project=project)


class ExtractionRuleViewSet(ProjectChildViewSet):
    serializer_class = ExtractionRuleSerializer


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    if not raw.isdigit():
        raise ValidationError({name: ["Must be a non-negative integer."]})
    return int(raw)


def _datetime_param(request: Request, name: str):
    from django.utils.dateparse import parse_datetime

    raw = request.query_params.get(name)
    if not raw:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:
        value = None
    if value is None:
        raise ValidationError({name: ["Must be an ISO 8601 date-time, e.g. 2026-11-20T10:00:00Z."]})
    return value


class PageListView(ListAPIView):
    """A project's pages, newest first; filters: status_class, host, fetched_after/before, url."""

    serializer_class = PageSerializer
    pagination_class = NewestFirstCursor

    def get_queryset(self) -> QuerySet[Page]:
        request = self.request
        pages = Page.objects.filter(project=visible_project(request, self.kwargs["project_pk"]))
        status_class = request.query_params.get("status_class")
        if status_class == "error":
            pages = pages.filter(status_code__isnull=True)
        elif status_class:
            if status_class not in STATUS_CLASSES:
                raise ValidationError({"status_class": [f"One of {', '.join([*STATUS_CLASSES, 'error'])}."]})
            low, high = STATUS_CLASSES[status_class]
            pages = pages.filter(status_code__gte=low, status_code__lt=high)
        if host := request.query_params.get("host"):
            pages = pages.filter(host=host)
        if after := _datetime_param(request, "fetched_after"):
            pages = pages.filter(fetched_at__gt=after)
        if before := _datetime_param(request, "fetched_before"):
            pages = pages.filter(fetched_at__lt=before)
        if url := request.query_params.get("url"):
            pages = pages.filter(url__contains=url)
        return pages


class UrlListView(ListAPIView):
    """The frontier's view of a project: one row per known URL; filters: state, host, url."""

    serializer_class = UrlRecordSerializer
    pagination_class = NewestFirstCursor

    def get_queryset(self) -> QuerySet[UrlRecord]:
        project = visible_project(self.request, self.kwargs["project_pk"])
        urls = UrlRecord.objects.filter(pool__name=project.pool_name)
        params = self.request.query_params
        if state := params.get("state"):
            if state not in ("waiting", "succeeded", "failed"):
                raise ValidationError({"state": ["One of waiting, succeeded, failed."]})
            urls = urls.filter(state=state)
        if host := params.get("host"):
            urls = urls.filter(host=host)
        if url := params.get("url"):
            urls = urls.filter(url__contains=url)
        return urls


class ExportView(APIView):
    """Every page of a project (or after ``after``) as JSON lines or CSV, streamed.

    The stream ends with the cursor to resume from: a last JSON line ``{"cursor": N}``, or a last
    CSV row ``#cursor,N``; the ``X-Export-Cursor`` header carries it too.
    """

    renderer_classes = [JSONRenderer]

    def perform_content_negotiation(self, request: Request, force: bool = False):
        # ``format`` names the export format here, not a DRF renderer.
        return JSONRenderer(), JSONRenderer.media_type

    def get(self, request: Request, project_pk: int) -> StreamingHttpResponse:
        project = visible_project(request, project_pk)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in FORMATS:
            raise ValidationError({"format": [f"One of {', '.join(FORMATS)}."]})
        after = _int_param(request, "after") or 0
        stream, cursor = export_stream(project, fmt, after=after)
        content_type = "application/x-ndjson" if fmt == "jsonl" else "text/csv; charset=utf-8"
        response = StreamingHttpResponse(stream, content_type=content_type)
        response["X-Export-Cursor"] = str(cursor)
        response["Content-Disposition"] = f'attachment; filename="{project.name}-after-{after}.{fmt}"'
        return response


class ApiDocsView(APIView):
    """A readable list of every endpoint, rendered on the server from the OpenAPI schema."""

    renderer_classes = [TemplateHTMLRenderer]
    template_name = "api_docs.html"

    def get(self, request: Request) -> Response:
        from rest_framework.schemas.openapi import SchemaGenerator

        from console.urls import api_patterns

        schema = SchemaGenerator(title="Crawl console API", patterns=api_patterns).get_schema(request, public=True)
        operations = [
            {"path": path, "method": method.upper(), "summary": op.get("description", "").strip().split("\n")[0],
             "operation_id": op.get("operationId", "")}
            for path, methods in schema["paths"].items()
            for method, op in methods.items()
        ]  # fmt: skip
        return Response({"operations": operations})
