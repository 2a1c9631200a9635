"""The page-wide follower: per-user numbered events, the websocket consumer, the JS module."""

from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FollowerConfig(AppConfig):
    name = "follower"
    verbose_name = _("Follower")

    def ready(self) -> None:
        """Connect the apps' sources (``FOLLOWER_SOURCES``: what becomes an event), and listen
        to sign-outs and to the events this process commits."""
        from django.contrib.auth.signals import user_logged_out

        from follower import hub, sources
        from follower.events import event_committed

        sources.connect()
        user_logged_out.connect(hub.signed_out, dispatch_uid="follower.signed_out")
        event_committed.connect(hub.committed, dispatch_uid="follower.committed")
