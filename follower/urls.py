"""HTTP routes of the follower, under ``/follow/``."""

from __future__ import annotations

from django.urls import path

from follower.views import snapshot_view

app_name = "follower"
urlpatterns = [path("snapshot", snapshot_view, name="snapshot")]
