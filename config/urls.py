"""Root URLs: admin, accounts, the JSON API, the settings card, the handoff panel, the chat
pages, and the JavaScript catalog of the scripts' translated strings (open to anyone: the sign-in
page's scripts read it too; cached by the browser for an hour, one URL per language, so a
tab that follows a handoff does not fetch it again)."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.utils import timezone
from django.views.decorators.cache import cache_control
from django.views.decorators.http import last_modified
from django.views.i18n import JavaScriptCatalog

from config.api import api

CATALOG_MAX_AGE = 3600
"""Seconds a browser reuses the JavaScript catalog without asking (its strings change only with
a deploy; the page asks for it with ``?lang=``, so a language change is a new URL)."""
_STARTED = timezone.now()
catalog = cache_control(max_age=CATALOG_MAX_AGE)(
    last_modified(lambda request: _STARTED)(JavaScriptCatalog.as_view())
)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("settings/", include("handoff_settings.urls")),
    path("handoff/", include("handoff.web.urls")),
    path("follow/", include("follower.urls")),
    path("jsi18n/", login_not_required(catalog), name="javascript-catalog"),
    path("", include("host.urls")),
]
