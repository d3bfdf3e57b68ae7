"""Django settings for the crawl console, read from the environment (see README)."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.management.utils import get_random_secret_key

from console.env import database_from_url, env_bool, env_list

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or (
    "insecure-dev-key-set-SECRET_KEY-in-production" if DEBUG else get_random_secret_key()
)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_rq",
    "rest_framework",
    "rest_framework.authtoken",
    "frontier",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "console.middleware.OperatorTimezoneMiddleware",
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": database_from_url(os.environ.get("DATABASE_URL") or "sqlite:///db.sqlite3", BASE_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
RQ_QUEUES = {
    "crawl": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600},
    "default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",  # first: anonymous gets 401, not 403
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_RATES": {"write": os.environ.get("API_WRITE_RATE", "300/min")},
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # request bodies above this are refused

# The crawl loop: extra pipeline steps (dotted paths), the shortest hub refresh span allowed.
CRAWL_PIPELINES: list[str] = []
CRAWL_MIN_REFRESH_SPAN = float(os.environ.get("CRAWL_MIN_REFRESH_SPAN", "60"))
CRAWL_JOB_SLICE = float(os.environ.get("CRAWL_JOB_SLICE", "5"))  # seconds of batches per RQ job
CRAWL_ROBOTS_TTL = int(os.environ.get("CRAWL_ROBOTS_TTL", "86400"))  # seconds a robots.txt is cached
CRAWL_ROBOTS_RETRY = int(os.environ.get("CRAWL_ROBOTS_RETRY", "60"))  # hold after a 5xx/unreachable one
FRONTIER_BACKOFF_BASE = float(os.environ.get("FRONTIER_BACKOFF_BASE", "30"))  # first retry delay, seconds

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
LOGIN_URL = "admin:login"
LOGIN_REDIRECT_URL = "console:project-list"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
