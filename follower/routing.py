"""Websocket routes of the follower (mounted in ``config/asgi.py``)."""

from __future__ import annotations

from django.urls import path

from follower.consumers import FollowConsumer

websocket_urlpatterns = [path("ws/follow/", FollowConsumer.as_asgi())]
