"""API representations; validation reuses the models' own validators and ``clean`` methods."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from console.models import ExtractionRule, Hub, Page, Project
from frontier.models import UrlRecord

MAX_SEEDS_PER_REQUEST = 10_000


def _model_clean(instance: Any) -> None:
    try:
        instance.clean()
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages) from None


class ProjectSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Project
        fields = [
            "id", "name", "owner", "shared_with", "seeds", "allowed_hosts", "include_subdomains",
            "include_patterns", "exclude_patterns", "max_depth", "max_pages", "crawl_delay",
            "max_in_flight_per_host", "obey_robots", "user_agent", "request_timeout", "max_page_bytes",
            "failure_threshold", "pending_timeout", "batch_size", "hub_percent", "order", "concurrency",
            "state", "state_reason", "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = ["state", "state_reason", "created_at", "started_at", "finished_at"]

    def validate_shared_with(self, groups: list) -> list:
        user = self.context["request"].user
        if not user.is_staff and any(not user.groups.filter(pk=g.pk).exists() for g in groups):
            raise serializers.ValidationError("You can only share a project with groups you belong to.")
        return groups


class HubSerializer(serializers.ModelSerializer):
    class Meta:
        model = Hub
        fields = ["id", "url", "refresh_span", "enabled", "last_fetched_at", "last_new_urls"]
        read_only_fields = ["last_fetched_at", "last_new_urls"]

    def validate(self, attrs: dict) -> dict:
        hub = Hub(**{**({} if self.instance is None else {"url": self.instance.url}), **attrs})
        _model_clean(hub)
        project = self.context["project"]
        url = attrs.get("url")
        if url and Hub.objects.filter(project=project, url=url).exclude(pk=getattr(self.instance, "pk", None)).exists():
            raise serializers.ValidationError({"url": "This project already has this hub."})
        return attrs


class ExtractionRuleSerializer(serializers.ModelSerializer):
    class Meta:
        model = ExtractionRule
        fields = ["id", "field", "kind", "expression", "url_pattern", "multiple"]

    def validate(self, attrs: dict) -> dict:
        current = {} if self.instance is None else {"kind": self.instance.kind, "expression": self.instance.expression}
        _model_clean(ExtractionRule(**{**current, **attrs}))
        project = self.context["project"]
        field = attrs.get("field")
        duplicate = ExtractionRule.objects.filter(project=project, field=field)
        if field and duplicate.exclude(pk=getattr(self.instance, "pk", None)).exists():
            raise serializers.ValidationError({"field": "This project already has a rule for this field."})
        return attrs


class SeedsSerializer(serializers.Serializer):
    urls = serializers.ListField(
        child=serializers.CharField(max_length=4000, trim_whitespace=True),
        allow_empty=False,
        max_length=MAX_SEEDS_PER_REQUEST,
    )


class PageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Page
        fields = [
            "id", "url", "host", "status_code", "error", "content_type", "size", "elapsed_ms", "depth",
            "is_hub", "title", "fields", "body_sha1", "outlinks", "fetched_at",
        ]  # fmt: skip
        read_only_fields = fields


class UrlRecordSerializer(serializers.ModelSerializer):
    class Meta:
        model = UrlRecord
        fields = [
            "id", "url", "host", "state", "attempts", "last_status", "last_error", "depth", "priority",
            "is_hub", "discovered_at", "updated_at", "fetched_at", "next_try_at",
        ]  # fmt: skip
        read_only_fields = fields
