"""Django settings, read from the environment.

Embedded default (nothing set): SQLite in ``db.sqlite3``, the in-memory channel layer, the
offline summarizer and offline agent. Real mode: ``DATABASE_URL`` (PostgreSQL), ``REDIS_URL``
(channels-redis), ``HANDOFF_LLM_BASE_URL`` / ``HANDOFF_LLM_API_KEY`` / ``HANDOFF_LLM_MODEL``
(any OpenAI-compatible endpoint).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-set-DJANGO_SECRET_KEY")
DEBUG = _env_bool("DJANGO_DEBUG", True)
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "*").split(",") if h]
CSRF_TRUSTED_ORIGINS = [
    o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o
]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "ninja",  # serves Swagger UI for /api/docs from static, not a CDN
    "host",
    "handoff",
    "handoff_settings",
    "follower",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "host.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

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

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}", conn_max_age=0
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (server, task worker) share the file: take the write lock up front
    # and wait for it instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # channels_redis blocks 5 s in BZPOPMIN; redis-py 8 gives up reading after 5 s
            # (its default socket_timeout) and the error closes every idle websocket with 1011.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

TASKS = {
    "default": {
        "BACKEND": os.environ.get("HANDOFF_TASK_BACKEND", "django_tasks_db.DatabaseBackend"),
    }
}

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:index"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Served by WhiteNoise straight from the apps and static/ (finders); a deployment that runs
# collectstatic names the folder in DJANGO_STATIC_ROOT.
STATIC_ROOT = os.environ.get("DJANGO_STATIC_ROOT") or None
WHITENOISE_USE_FINDERS = True

# --- Session Handoff -------------------------------------------------------------------------

# Any OpenAI-compatible endpoint; when HANDOFF_LLM_BASE_URL is empty the offline summarizer and
# offline agent stand in (DESIGN.md, run modes).
HANDOFF_LLM_BASE_URL = os.environ.get("HANDOFF_LLM_BASE_URL", "")
HANDOFF_LLM_API_KEY = os.environ.get("HANDOFF_LLM_API_KEY", "")
HANDOFF_LLM_MODEL = os.environ.get("HANDOFF_LLM_MODEL", "")

# The model a session gets when nothing else names one (seed 003 §6.1, the chain's last step):
# the endpoint's model when one is configured, else the offline agent that actually answers.
HOST_DEFAULT_MODEL = os.environ.get("HOST_DEFAULT_MODEL") or (
    HANDOFF_LLM_MODEL if HANDOFF_LLM_BASE_URL else "offline-agent"
)

# Context windows in tokens, per model (DESIGN.md, capacity). Unknown models count as 0.
# Edited live through the settings card / admin; these are the defaults of a fresh install.
HOST_CONTEXT_WINDOWS = {
    "claude-opus-4-6": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4-20250514": 200_000,
    "claude-3-5-sonnet-20241022": 200_000,
    "gpt-5.5": 272_000,
    "gpt-5": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "offline-agent": 32_000,
}

# A summarizing record older than this is failed by recovery (seconds; the call's own timeout
# is 180 s, seed 000 brief schema).
HANDOFF_SUMMARIZE_TIMEOUT = int(os.environ.get("HANDOFF_SUMMARIZE_TIMEOUT", "300"))

# How the handoff app finds the host's services (seed 003 §6.3–6.4): name -> dotted path of a
# zero-argument factory, or None to leave the service out. Read at each use, never cached.
HANDOFF_SERVICES: dict[str, str | None] = {
    "session_controller": "host.services.SessionController",
    "workspace_registry": "host.services.WorkspaceRegistry",
    "agent_presets": "host.services.AgentPresets",
    "model_selection": "host.services.ModelSelection",
    "permission_presets": "host.services.PermissionPresets",
    "plan_mode": "host.services.PlanMode",
    "compaction": "host.services.Compaction",
    "usage_projection": "host.services.UsageProjection",
    "token_meter": "host.services.TokenMeter",
    "settings_store": "handoff_settings.store.DatabaseSettingsStore",
    "status_channel": "follower.channel.StatusChannel",
    "llm": "host.services.LLM",
}

# The host's signals the handoff app connects to in ready() (dotted paths; it imports no host).
HANDOFF_HOST_SIGNALS = {
    "session_idle": "host.signals.session_idle",
    "blocker_cleared": "host.signals.blocker_cleared",
    "before_step": "host.signals.before_step",
}

# A prepared or committed record unchanged this long (seconds) is stuck: recovery moves it on.
HANDOFF_RECOVERY_GRACE = int(os.environ.get("HANDOFF_RECOVERY_GRACE", "60"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}},
}

# Follower events (DESIGN.md invariant 10): kept this many seconds and at most this many per
# user; each socket also reads stored events every FOLLOWER_POLL_INTERVAL seconds so events
# written by another process (the task worker, a management command) reach it without Redis.
FOLLOWER_EVENT_RETENTION = int(os.environ.get("FOLLOWER_EVENT_RETENTION", "600"))
FOLLOWER_EVENT_LIMIT = int(os.environ.get("FOLLOWER_EVENT_LIMIT", "1000"))
FOLLOWER_POLL_INTERVAL = float(os.environ.get("FOLLOWER_POLL_INTERVAL", "1"))
