"""Routes of the REST API (/api/v1/) and its schema and docs."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from console.api import views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="project")

children = DefaultRouter(trailing_slash=True)
children.include_root_view = False
children.register("hubs", views.HubViewSet, basename="hub")
children.register("rules", views.ExtractionRuleViewSet, basename="rule")

urlpatterns = [
    path("", include(router.urls)),
    path("projects/<int:project_pk>/", include(children.urls)),
    path("projects/<int:project_pk>/pages/", views.PageListView.as_view(), name="project-pages"),
    path("projects/<int:project_pk>/urls/", views.UrlListView.as_view(), name="project-urls"),
    path("projects/<int:project_pk>/export", views.ExportView.as_view(), name="project-export"),
]
