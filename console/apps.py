"""Django app config for the operator side of the console."""

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Crawl console"
    default_auto_field = "django.db.models.BigAutoField"
