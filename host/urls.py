"""URL routes of the chat pages (names under ``chat:``; the follower relies on ``chat:sidebar``
and ``chat:session``), and ``/favicon.ico`` for browsers that ask for it regardless."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import URLPattern, path
from django.utils.functional import lazy
from django.views.generic import RedirectView

from host import views

app_name = "chat"
urlpatterns: list[URLPattern] = [
    path("", views.index, name="index"),
    path("new/", views.new_session, name="new"),
    path("language/", login_not_required(views.choose_language), name="language"),
    path("sidebar/", views.sidebar, name="sidebar"),
    path("folders/", views.switch_folder, name="folder"),
    path("s/<uuid:session_id>/", views.session_page, name="session"),
    path("s/<uuid:session_id>/messages/", views.messages, name="messages"),
    path("s/<uuid:session_id>/compose/", views.compose, name="compose"),
    # Open to anyone; the static URL is resolved at the first request (storage may hash names).
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=lazy(static, str)("favicon.svg"))),
    ),
]
