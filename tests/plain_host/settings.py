"""Settings of the plain host (``tests/plain_host``): the handoff on a host of its own.

Its own apps, its own session model, its own test database (SQLite, a file); the handoff's
apps are the engine (``handoff``), its pages (``handoff.web``) and its settings row's old home
(``handoff_settings``, which the engine's migrations name), and the follower feeds its page
from its own source and the handoff's (``FOLLOWER_SOURCES``); nothing of ``host``.
"""

import os
import tempfile
from pathlib import Path

SECRET_KEY = "plain-host-tests-only"  # noqa: S105 - a test host
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
USE_TZ = True
ROOT_URLCONF = "tests.plain_host.urls"
LOGIN_URL = "/login/"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django_tasks",
    "django.contrib.staticfiles",
    "channels",
    "handoff",
    "handoff.web",
    "handoff_settings",
    "follower",
    "tests.plain_host",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "follower.middleware.FollowerBaselineMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]
STATIC_URL = "/static/"
# htmx (a host brings its own) is a file of the reference host's static folder; the follower
# ships its transport in its app (follower/static/).
STATICFILES_DIRS = [Path(__file__).resolve().parents[2] / "static"]
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# The test database is a file (the test runner makes and drops it): the browser test serves it
# from a Daphne process (tests/plain_host/asgi.py), which opens it as PLAIN_HOST_DATABASE.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("PLAIN_HOST_DATABASE", ":memory:"),
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        "TEST": {
            "NAME": str(Path(tempfile.gettempdir()) / f"plain-host-test-{os.getpid()}.sqlite3")
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}

HANDOFF_SESSION_MODEL = "plain_host.Conversation"
# The handoff's pages on this host: its page of a conversation, its base template, no Markdown.
HANDOFF_SESSION_URL = "conversation"
HANDOFF_BASE_TEMPLATE = "plain_host/base.html"
HANDOFF_MARKDOWN = None
HANDOFF_SERVICES = {
    "session_controller": "tests.plain_host.services.Conversations",
    "workspace_registry": None,
    "agent_presets": None,
    "model_selection": None,
    "permission_presets": None,
    "plan_mode": None,
    "compaction": None,
    "usage_projection": "tests.plain_host.services.Usage",
    "token_meter": None,
    "settings_store": "handoff.settings_store.DatabaseSettingsStore",
    "status_channel": None,
    "llm": "tests.plain_host.services.OfflineModel",
}
HANDOFF_HOST_SIGNALS = {
    "session_idle": "tests.plain_host.chat.session_idle",
    "before_step": "tests.plain_host.chat.before_step",
    "blocker_cleared": None,
    "session_links": None,
    "offline_reply": None,
    "composer_command": None,
    "session_window": None,
}

# What becomes a follower event: this host's rows, then the handoff's records and redirects.
FOLLOWER_SOURCES = [
    "tests.plain_host.follow.ConversationSource",
    "handoff.web.follow.HandoffSource",
]
FOLLOWER_POLL_INTERVAL = 0
