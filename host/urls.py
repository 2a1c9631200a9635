"""URL routes of the chat pages (names under ``chat:``; the follower relies on ``chat:sidebar``
and ``chat:session``)."""

from __future__ import annotations

from django.urls import URLPattern, path

from host import views

app_name = "chat"
urlpatterns: list[URLPattern] = [
    path("", views.index, name="index"),
    path("new/", views.new_session, name="new"),
    path("sidebar/", views.sidebar, name="sidebar"),
    path("s/<uuid:session_id>/", views.session_page, name="session"),
    path("s/<uuid:session_id>/messages/", views.messages, name="messages"),
    path("s/<uuid:session_id>/compose/", views.compose, name="compose"),
]
