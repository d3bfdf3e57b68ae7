"""The operator console's pages: thin over services, selectors and the dashboard reads."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from console import dashboard, services
from console.models import Hub, Page, Project
from console.selectors import project_status, projects_visible_to
from frontier.canonical import try_canonicalize
from frontier.models import UrlRecord


def _project(request: HttpRequest, pk: int) -> Project:
    return get_object_or_404(projects_visible_to(request.user), pk=pk)


@login_required
@require_GET
def project_list(request: HttpRequest) -> HttpResponse:
    projects = [(p, project_status(project=p)) for p in projects_visible_to(request.user).order_by("name")]
    return render(request, "console/project_list.html", {"projects": projects})


@login_required
@require_POST
def project_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    project = _project(request, pk)
    if action == "revive":
        try:
            count = services.project_revive_chains(project=project)
        except services.ProjectStateError as exc:
            messages.warning(request, str(exc))
        else:
            messages.success(request, f"{count} batch job chain(s) of {project.name} restarted.")
    elif action not in ("start", "pause", "resume", "stop"):
        messages.error(request, f"Unknown action {action!r}.")
    else:
        try:
            project = getattr(services, f"project_{action}")(project=project)
        except services.ProjectStateError as exc:
            messages.warning(request, str(exc))
        else:
            messages.success(request, f"{project.name} is {project.state}.")
    return redirect(request.POST.get("next") or "console:project-list")


@login_required
@require_GET
def project_dashboard(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "console/dashboard.html", {"project": _project(request, pk)})


@login_required
@require_GET
def dashboard_json(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(dashboard.dashboard_data(_project(request, pk)))


@login_required
@require_GET
def hosts_json(request: HttpRequest, pk: int) -> JsonResponse:
    params = request.GET
    page = int(params["page"]) if params.get("page", "").isdigit() else 1
    result = dashboard.host_table(
        _project(request, pk),
        query=params.get("q", "").strip(),
        sort=params.get("sort", "waiting"),
        desc=params.get("dir", "desc") != "asc",
        page=page,
    )
    return JsonResponse({"rows": result.rows, "total": result.total, "page": result.page, "pages": result.pages})


@login_required
@require_GET
def failures(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    return render(request, "console/failures.html", {"project": project, "matrix": dashboard.failure_matrix(project)})


@login_required
def failure_urls(request: HttpRequest, pk: int, host: str, cls: str) -> HttpResponse:
    project = _project(request, pk)
    if request.method == "POST":
        count = services.project_requeue_failed(project=project, host=host, outcome=cls)
        messages.success(request, f"{count} URL(s) of {host} ({cls}) queued again.")
        return redirect("console:failure-urls", pk=pk, host=host, cls=cls)
    urls = dashboard.failure_urls(project, host, cls)
    return render(request, "console/failure_urls.html", {"project": project, "host": host, "cls": cls, "urls": urls})


@login_required
@require_POST
def requeue_all_failed(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    count = services.project_requeue_failed(project=project)
    messages.success(request, f"{count} failed URL(s) queued again.")
    return redirect("console:failures", pk=pk)


@login_required
@require_POST
def hub_span(request: HttpRequest, pk: int, hub_pk: int) -> HttpResponse:
    project = _project(request, pk)
    hub = get_object_or_404(Hub, pk=hub_pk, project=project)
    try:
        services.hub_set_refresh_span(hub=hub, refresh_span=request.POST.get("refresh_span", ""))
    except ValidationError as exc:
        if request.headers.get("Accept") == "application/json":
            return JsonResponse({"error": " ".join(exc.messages)}, status=400)
        messages.error(request, " ".join(exc.messages))
    else:
        if request.headers.get("Accept") == "application/json":
            return JsonResponse({"refresh_span": hub.refresh_span})
        messages.success(request, f"Refresh span of {hub.url} is now {hub.refresh_span:g} s.")
    return redirect("console:dashboard", pk=pk)


@login_required
def inspect_url(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    url = (request.POST.get("url") or request.GET.get("url") or "").strip()
    if request.method == "POST":
        queued = services.url_requeue(project=project, url=url)
        messages.success(request, f"{url} queued again." if queued else f"{url} is already waiting or in flight.")
        return redirect(f"{request.path}?url={url}")
    record, pages, error = None, [], ""
    if url:
        found = try_canonicalize(url)
        if found is None:
            error = "Not a crawlable URL."
        else:
            record = UrlRecord.objects.filter(pool__name=project.pool_name, fingerprint=found.fingerprint).first()
            pages = list(Page.objects.filter(project=project, url=found.url).order_by("-id")[:100])
            if record is None:
                error = "This project's frontier has never seen this URL."
    state = services.pool_for(project).state(url) if record else ""
    context = {"project": project, "url": url, "record": record, "pages": pages, "error": error, "state": state}
    return render(request, "console/inspect.html", context)
