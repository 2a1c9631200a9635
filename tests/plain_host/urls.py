"""The plain host's URLs: its page, and the apps it installs (the handoff's pages, the
follower's snapshot, the settings card's name for the panel's link, the JavaScript catalog)."""

from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from tests.plain_host import views

urlpatterns = [
    path("c/<uuid:session_id>/", views.conversation, name="conversation"),
    path("handoff/", include("handoff.web.urls")),
    path("settings/", include("handoff_settings.urls")),
    path("follow/", include("follower.urls")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
]
