"""Schema-driven fuzzing: every operation of /api/schema/, generated inputs, never a 5xx."""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import urlencode

import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from rest_framework.test import APIClient

from console.models import ExtractionRule, Hub, Project

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

EXAMPLES_PER_OPERATION = 12


def test_no_operation_answers_5xx(redis_url, monkeypatch):
    monkeypatch.setattr("console.crawl.jobs.enqueue_batches", lambda *args: None)
    monkeypatch.setattr("console.api.views.WriteRateThrottle.allow_request", lambda *args: True)
    user = User.objects.create_user("fuzzer", is_staff=True)
    client = APIClient()
    client.force_authenticate(user)
    project = Project.objects.create(name="fuzz", owner=user, seeds="http://a.example/")
    hub = Hub.objects.create(project=project, url="http://a.example/hub", refresh_span=3600)
    ExtractionRule.objects.create(project=project, field="title", expression="h1::text")
    schema = schemathesis.openapi.from_dict(client.get("/api/schema/").json())
    failures: list[str] = []
    statuses: Counter[int] = Counter()
    # Deletions last: once the project is gone every later call would only meet a 404.
    operations = sorted((result.ok() for result in schema.get_all_operations()), key=lambda op: op.method == "delete")
    assert len(operations) > 15

    def checker(operation):
        nested = "{project_pk}" in operation.path

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def check(case) -> None:
            params = dict(case.path_parameters or {})
            if "project_pk" in params:
                params["project_pk"] = project.pk
            if "id" in params:
                params["id"] = hub.pk if nested else project.pk
            path = operation.path.format(**params)
            query = urlencode(case.query or {}, doseq=True)
            body = case.body if isinstance(case.body, dict | list | str | int | float | bool) else None
            response = client.generic(
                case.method.upper(),
                f"{path}?{query}" if query else path,
                data=json.dumps(body) if body is not None else "",
                content_type="application/json",
            )
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                failures.append(f"{case.method.upper()} {path}?{query} {body!r} -> {response.status_code}")

        return check

    for operation in operations:
        checker(operation)()
        Project.objects.filter(pk=project.pk).update(state="new")  # let transitions be tried again
    assert failures == []
    assert sum(statuses.values()) >= 3 * len(operations)  # the fuzzing really ran
    assert sum(n for code, n in statuses.items() if code < 300) >= len(operations)  # and reached real code
