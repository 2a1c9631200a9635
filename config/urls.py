"""Root URLs: admin, accounts, the JSON API, the settings card, the handoff panel, the chat
pages, and the JavaScript catalog of the scripts' translated strings (open to anyone: the sign-in
page's scripts read it too)."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from config.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("settings/", include("handoff_settings.urls")),
    path("handoff/", include("handoff.web.urls")),
    path("follow/", include("follower.urls")),
    path("jsi18n/", login_not_required(JavaScriptCatalog.as_view()), name="javascript-catalog"),
    path("", include("host.urls")),
]
