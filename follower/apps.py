"""The page-wide follower: per-user numbered events, the websocket consumer, the JS module."""

from __future__ import annotations

from django.apps import AppConfig


class FollowerConfig(AppConfig):
    name = "follower"
    verbose_name = "Follower"

    def ready(self) -> None:
        """Listen to what the host and the handoff app announce, to sign-outs and to the
        events this process commits."""
        from django.contrib.auth.signals import user_logged_out

        from follower import hub, publishing
        from follower.events import event_committed
        from handoff.signals import (
            main_switched,
            record_changed,
            redirects_changed,
            settings_changed,
        )
        from host.signals import entry_appended, session_changed

        session_changed.connect(publishing.session_changed, dispatch_uid="follower.session")
        entry_appended.connect(publishing.entry_appended, dispatch_uid="follower.entry")
        record_changed.connect(publishing.record_changed, dispatch_uid="follower.record")
        redirects_changed.connect(publishing.redirects_changed, dispatch_uid="follower.redirects")
        settings_changed.connect(publishing.settings_changed, dispatch_uid="follower.settings")
        main_switched.connect(publishing.main_switched, dispatch_uid="follower.switch")
        user_logged_out.connect(hub.signed_out, dispatch_uid="follower.signed_out")
        event_committed.connect(hub.committed, dispatch_uid="follower.committed")
