"""Django settings, read from the environment.

Embedded default (nothing set): SQLite in ``db.sqlite3``, the in-memory channel layer, the
offline summarizer and offline agent. Real mode: ``DATABASE_URL`` (PostgreSQL), ``REDIS_URL``
(channels-redis), ``HANDOFF_LLM_BASE_URL`` / ``HANDOFF_LLM_API_KEY`` / ``HANDOFF_LLM_MODEL``
(any OpenAI-compatible endpoint).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url

from config.secret_key import load_or_create

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Production-safe unless told otherwise (docs/operations.md, Production settings): no debug pages
# (they list the URL patterns and show tracebacks with the database host), only local host names,
# and no key written down anywhere. ``make run`` turns DJANGO_DEBUG on for the demo.
DEBUG = _env_bool("DJANGO_DEBUG", False)
# Without DJANGO_SECRET_KEY each checkout generates its own random key once (config.secret_key);
# ``check --deploy`` asks a deployment to set one (host.checks).
SECRET_KEY_GENERATED = not os.environ.get("DJANGO_SECRET_KEY")
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or load_or_create(BASE_DIR / ".secret_key")
ALLOWED_HOSTS = _env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

# DJANGO_HTTPS=1 behind a TLS-terminating proxy that sets X-Forwarded-Proto (docs/operations.md):
# redirect plain HTTP, secure cookies only, and HSTS (subdomains included, preload marked) for
# DJANGO_HSTS_SECONDS (a year; 0 turns HSTS off).
HTTPS = _env_bool("DJANGO_HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

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
    "handoff.web",
    "handoff_settings",
    "follower",
    "agent_hooks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "common.reads.ReadsOnceMiddleware",
    "config.middleware.RefuseNulQueryMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "host.middleware.UserLocaleMiddleware",
    "host.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "follower.middleware.FollowerBaselineMiddleware",
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

DATABASES = {"default": dj_database_url.config(default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
# Daphne runs each HTTP request in a thread of its own, so persistent connections
# (CONN_MAX_AGE) would leave a connection open per thread, unbounded: PostgreSQL gets a pool per
# process instead (psycopg_pool; at most DJANGO_DB_POOL_MAX connections, a request waits for a
# free one rather than failing with "too many clients"); SQLite opens its file per request.
# The pool checks each connection before handing it out (CONN_HEALTH_CHECKS: Django gives the
# pool psycopg_pool's own ``ConnectionPool.check_connection``, one empty query): after a database
# restart or a network cut the connections it holds are dead, and it replaces them instead of
# failing the next requests with "server closed the connection unexpectedly".
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(os.environ.get("DJANGO_DB_POOL_MAX", "5")),
        "timeout": 30,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (server, task worker) share the file: take the write lock up front
    # and wait for it instead of failing with "database is locked". In WAL mode,
    # synchronous=NORMAL syncs at checkpoints rather than at each commit: a power cut may lose
    # the last commits but never corrupts the file (sqlite.org/pragma.html#pragma_synchronous).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # The test database is a file too (the test runner makes and drops it): the follower's
    # browser tests serve it from a Daphne process, which cannot open an in-memory database.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"handoff-test-{os.getpid()}.sqlite3")
    }

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
# True when that backend runs each task inside ``enqueue()`` (django-tasks' immediate backend)
# instead of queueing it: an agent turn's task is then enqueued once the caller's transaction
# commits, so no model call runs inside it (host.lifecycle). A queueing backend leaves it False:
# the turn and its task row commit together.
HOST_TASKS_RUN_IN_CALLER = _env_bool("HOST_TASKS_RUN_IN_CALLER", False)
# HTTP requests one server process runs at once, each on a thread kept for it (config.concurrency;
# docs/design.md, "HTTP requests run a few at a time"): the rest wait on the event loop in
# arrival order. One by default: page renders are CPU work under one GIL, so more at once
# render no faster, and each one more takes the GIL from the event loop, where the follower's
# hub receives and fans out events. Four when tasks run inside requests (a model call would
# hold the only slot). Below the pool's DJANGO_DB_POOL_MAX (5), so a running request finds a
# connection. 0: no bound (a new thread per request, Django's own way).
HTTP_CONCURRENCY = int(
    os.environ.get("DJANGO_HTTP_CONCURRENCY", "4" if HOST_TASKS_RUN_IN_CALLER else "1")
)

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:index"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# English and Simplified Chinese. A signed-in user's stored choice wins, then the language cookie,
# then the browser's Accept-Language (host.middleware.UserLocaleMiddleware).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Django's zh_Hans groups digits by four with no separator; the site's groups by three with a comma.
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Served by WhiteNoise straight from the apps and static/ (finders); a deployment that runs
# collectstatic names the folder in DJANGO_STATIC_ROOT.
STATIC_ROOT = os.environ.get("DJANGO_STATIC_ROOT") or None
WHITENOISE_USE_FINDERS = True

# What plugins add to the host's pages (host/templatetags/chat_hooks.py): per slot of the
# conversation page, the templates rendered there with the page's context; functions giving a
# session title's note in the list; functions applied to a plugin message's rendered Markdown.
# Leave them empty and the host's pages stand without the handoff.
HOST_PAGE_PANELS: dict[str, list[str]] = {
    "conversation_title": ["handoff/slots/title_hint.html"],
    "conversation_header": ["handoff/slots/lineage_links.html"],
    "conversation_panels": ["handoff/slots/panel.html"],
    "conversation_composer": ["handoff/slots/review_notice.html"],
}
# The host's own sections under Settings → Conversation Collaboration (handoff_settings.views).
HANDOFF_SETTINGS_SECTIONS = ["chat/_followed_folders.html"]
HOST_TITLE_NOTES = ["handoff.web.panel.continued_note"]
HOST_PLUGIN_ENTRY_FILTERS = [
    "handoff.web.log_links.brief_links",
    "handoff.words.log.brief_headings",
]
HOST_ENTRY_WORDS = ["handoff.words.log.in_reader_language"]

# --- Session Handoff -------------------------------------------------------------------------

# The host's agent, and through host.services.LLM the handoff's summary call: any
# OpenAI-compatible endpoint; when HANDOFF_LLM_BASE_URL is empty the offline summarizer and
# offline agent stand in (docs/operations.md, Real mode). The environment keeps its names.
HOST_LLM_BASE_URL = os.environ.get("HANDOFF_LLM_BASE_URL", "")
HOST_LLM_API_KEY = os.environ.get("HANDOFF_LLM_API_KEY", "")
HOST_LLM_MODEL = os.environ.get("HANDOFF_LLM_MODEL", "")

# The model a session gets when nothing else names one (docs/spec.md, Inheritance,
# the ``model`` row's last step): the endpoint's model when one is configured, else the offline
# agent that actually answers.
HOST_DEFAULT_MODEL = os.environ.get("HOST_DEFAULT_MODEL") or (
    HOST_LLM_MODEL if HOST_LLM_BASE_URL else "offline-agent"
)

# Context windows in tokens, per model (docs/spec.md, Turns and capacity). Unknown models count as
# 0. Edited live through the settings card / admin; these are the defaults of a fresh install.
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
# is 180 s, docs/spec.md, Brief).
HANDOFF_SUMMARIZE_TIMEOUT = int(os.environ.get("HANDOFF_SUMMARIZE_TIMEOUT", "300"))

# The host's session model the handoff's tables point at (handoff/session_model.py says what it
# must have). Like AUTH_USER_MODEL: set it once, before the first migrate.
HANDOFF_SESSION_MODEL = "host.Session"

# How the handoff app finds the host's services (docs/spec.md, Degradation): name -> dotted path of
# a zero-argument factory, or None to leave the service out. Read at each use, never cached.
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
    "settings_store": "handoff.settings_store.DatabaseSettingsStore",
    "status_channel": "follower.channel.StatusChannel",
    "llm": "host.services.LLM",
}

# This host's signals the handoff connects to (handoff.apps.HOST_SIGNALS: a hook not named here
# is left out), the URL name of its page of a session, and its Markdown for the lineage page's
# briefs (handoff.web.host_pages). The handoff's defaults name no host.
HANDOFF_HOST_SIGNALS: dict[str, str | None] = {
    "session_idle": "host.signals.session_idle",
    "blocker_cleared": "host.signals.blocker_cleared",
    "before_step": "host.signals.before_step",
    "session_links": "host.signals.session_links",
    "offline_reply": "host.signals.offline_reply",
    "composer_command": "host.signals.composer_command",
    "session_window": "host.signals.session_window",
}
HANDOFF_SESSION_URL = "chat:session"
HANDOFF_MARKDOWN = "host.templatetags.chat_markdown.markdown"

# A running turn's lease (seconds, host.turn_lease): renewed every third of it while the agent
# runs; a turn not renewed for this long is ended by the task worker's sweep.
HOST_TURN_LEASE = float(os.environ.get("HOST_TURN_LEASE", "15"))

# A prepared or committed record unchanged this long (seconds) is stuck: recovery moves it on.
HANDOFF_RECOVERY_GRACE = int(os.environ.get("HANDOFF_RECOVERY_GRACE", "60"))
# Seconds a brief may wait for review before recovery discards it (docs/spec.md, Review).
HANDOFF_REVIEW_TIMEOUT = int(os.environ.get("HANDOFF_REVIEW_TIMEOUT", "86400"))
# Backoff after failed automatic attempts: seconds after the first, doubling up to the cap.
HANDOFF_BACKOFF_BASE = int(os.environ.get("HANDOFF_BACKOFF_BASE", "60"))
HANDOFF_BACKOFF_CAP = int(os.environ.get("HANDOFF_BACKOFF_CAP", "3600"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}},
}

# Follower events (docs/spec.md, Follower rules): kept this many seconds and at most this many per
# user. On the in-memory channel layer one reader per process (follower.hub) looks for stored
# events every FOLLOWER_POLL_INTERVAL seconds (one query for all its sockets; 0 turns it off;
# on SQLite only when the database files changed), so events written by another process (the
# task worker, a command) reach the page without Redis; with Redis nothing is polled.
# What becomes a follower event, and what a page's snapshot and baseline hold, come from the apps
# (follower.sources): the host's session rows and log lines, the handoff's records and redirects.
FOLLOWER_SOURCES = ["host.follow.SessionSource", "handoff.web.follow.HandoffSource"]
FOLLOWER_EVENT_RETENTION = int(os.environ.get("FOLLOWER_EVENT_RETENTION", "600"))
FOLLOWER_EVENT_LIMIT = int(os.environ.get("FOLLOWER_EVENT_LIMIT", "1000"))
FOLLOWER_POLL_INTERVAL = float(os.environ.get("FOLLOWER_POLL_INTERVAL", "0.1"))
