"""The handoff app: connects its receivers to the host's signals when Django starts.

The host's signals are named by dotted path in ``settings.HANDOFF_HOST_SIGNALS`` (the handoff
app never imports the host): ``session_idle`` and ``blocker_cleared`` start an automatic
evaluation, ``before_step`` forwards input of a redirected session, ``session_links`` tells the
host's sidebar which sessions were handed off to which (lineage). Connecting is not
resolving a service: services are still looked up at each use (seed 003 §6.4).
"""

from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

DEFAULT_HOST_SIGNALS = {
    "session_idle": "host.signals.session_idle",
    "blocker_cleared": "host.signals.blocker_cleared",
    "before_step": "host.signals.before_step",
    "session_links": "host.signals.session_links",
}


class HandoffConfig(AppConfig):
    name = "handoff"
    verbose_name = "Session handoff"

    def ready(self) -> None:
        """Connect the receivers to the host's signals (each at most once); register the
        session model's system check (``handoff.session_model``)."""
        from handoff import forwarding, lineage, operations
        from handoff.session_model import check_session_model

        checks.register(check_session_model)

        paths = {**DEFAULT_HOST_SIGNALS, **getattr(settings, "HANDOFF_HOST_SIGNALS", {})}
        receivers = {
            "session_idle": operations.on_session_idle,
            "blocker_cleared": operations.on_blocker_cleared,
            "before_step": forwarding.before_step,
            "session_links": lineage.session_links,
        }
        for name, receiver in receivers.items():
            if paths.get(name):
                import_string(paths[name]).connect(
                    receiver, weak=False, dispatch_uid=f"handoff.{name}"
                )
