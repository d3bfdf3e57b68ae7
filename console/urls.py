"""URL routes of the console."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from rest_framework.renderers import JSONOpenAPIRenderer
from rest_framework.schemas import get_schema_view

from console.api.views import ApiDocsView

api_patterns = [path("api/v1/", include("console.api.urls"))]

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="console:project-list", permanent=False)),
    path("console/", include("console.urls_console")),
    path("admin/", admin.site.urls),
    *api_patterns,
    path(
        "api/schema/",
        get_schema_view(
            title="Crawl console API",
            version="1.0.0",
            description="Projects, hubs, rules, seeds, pages, frontier URLs, stats and export.",
            patterns=api_patterns,
            renderer_classes=[JSONOpenAPIRenderer],
        ),
        name="api-schema",
    ),
    path("api/docs/", ApiDocsView.as_view(), name="api-docs"),
    path("api-auth/", include("rest_framework.urls")),
]
