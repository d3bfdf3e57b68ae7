"""Django app config for the frontier: registers its system checks."""

from django.apps import AppConfig


class FrontierConfig(AppConfig):
    name = "frontier"
    verbose_name = "URL frontier"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from frontier import checks  # noqa: F401  (registers the checks)
