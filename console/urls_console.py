"""Routes of the operator console pages (under /console/)."""

from django.urls import path

from console import views

app_name = "console"

urlpatterns = [
    path("", views.project_list, name="project-list"),
    path("projects/<int:pk>/", views.project_dashboard, name="dashboard"),
    path("projects/<int:pk>/dashboard.json", views.dashboard_json, name="dashboard-json"),
    path("projects/<int:pk>/hosts.json", views.hosts_json, name="hosts-json"),
    path("projects/<int:pk>/failures/", views.failures, name="failures"),
    path("projects/<int:pk>/failures/requeue", views.requeue_all_failed, name="requeue-failed"),
    path("projects/<int:pk>/failures/<str:host>/<path:cls>/", views.failure_urls, name="failure-urls"),
    path("projects/<int:pk>/hubs/<int:hub_pk>/span", views.hub_span, name="hub-span"),
    path("projects/<int:pk>/inspect/", views.inspect_url, name="inspect"),
    path("projects/<int:pk>/<str:action>", views.project_action, name="project-action"),
]
