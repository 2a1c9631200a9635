"""Settings of the plain host (``tests/plain_host``): the handoff on a host of its own.

Its own apps, its own session model, its own test database (SQLite in memory); the handoff's
apps are the engine (``handoff``) and its settings row's old home (``handoff_settings``, which
the engine's migrations name); no ``host``, ``handoff.web`` or ``follower``.
"""

SECRET_KEY = "plain-host-tests-only"  # noqa: S105 - a test host
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
USE_TZ = True
ROOT_URLCONF = "tests.plain_host.urls"
LOGIN_URL = "/login/"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django_tasks",
    "handoff",
    "handoff_settings",
    "tests.plain_host",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}

HANDOFF_SESSION_MODEL = "plain_host.Conversation"
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
}
