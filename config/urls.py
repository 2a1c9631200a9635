"""Root URLs: admin, accounts, the JSON API, the settings card, the handoff panel and the chat
pages."""

from django.contrib import admin
from django.urls import include, path

from config.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("settings/", include("handoff_settings.urls")),
    path("handoff/", include("handoff.web.urls")),
    path("follow/", include("follower.urls")),
    path("", include("host.urls")),
]
