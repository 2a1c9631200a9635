"""The plain host's URLs: its page, and the apps it installs (the handoff's pages, the
follower's snapshot, the handoff's half of the JSON API, the settings card when it is installed,
the JavaScript catalog).

A conversation's id is matched as the handoff matches it: by its primary key's converter."""

from django.apps import apps
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from handoff.session_model import session_path_converter
from tests.plain_host import views
from tests.plain_host.api import api

urlpatterns = [
    path(f"c/<{session_path_converter()}:session_id>/", views.conversation, name="conversation"),
    path("handoff/", include("handoff.web.urls")),
    path("follow/", include("follower.urls")),
    path("api/", api.urls),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
]
if apps.is_installed("handoff_settings"):
    urlpatterns.append(path("settings/", include("handoff_settings.urls")))
