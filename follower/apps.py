"""The page-wide follower: per-user numbered events, the websocket consumer, the JS module."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save, pre_save


class FollowerConfig(AppConfig):
    name = "follower"
    verbose_name = "Follower"

    def ready(self) -> None:
        """Watch the host's sessions and the handoff's records and redirects (lazy senders)."""
        from follower import receivers

        pre_save.connect(receivers.remember_session, sender="host.Session")
        post_save.connect(receivers.session_saved, sender="host.Session")
        post_save.connect(receivers.message_saved, sender="host.Message")
        pre_save.connect(receivers.remember_record, sender="handoff.HandoffRecord")
        post_save.connect(receivers.record_saved, sender="handoff.HandoffRecord")
        pre_save.connect(receivers.remember_redirect, sender="handoff.Redirect")
        post_save.connect(receivers.redirect_saved, sender="handoff.Redirect")
        post_delete.connect(receivers.redirect_deleted, sender="handoff.Redirect")
