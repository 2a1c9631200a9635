"""The handoff app: connects its receivers to the host's signals when Django starts.

The host's signals are named by dotted path in ``settings.HANDOFF_HOST_SIGNALS`` (the handoff
app never imports the host, and names none: a hook the setting does not name, or maps to
``None``, is left out; ``HOST_SIGNALS`` are the hooks it knows). ``session_idle`` and
``blocker_cleared`` start an automatic evaluation, ``before_step`` forwards input of a
redirected session, ``session_links`` tells the host's sidebar which sessions were handed off
to which (lineage), ``offline_reply`` gives the offline agent's answer to a brief,
``session_window`` the window the host's agent fits its model calls to (the context meter's);
``composer_command`` is answered by the web layer (``handoff.web.apps``). Connecting is not
resolving a service: services are still looked up at each use (docs/spec.md, Degradation).
"""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.dispatch import Signal
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from handoff.conf import handoff_settings

HOST_SIGNALS = (
    "session_idle",
    "blocker_cleared",
    "before_step",
    "session_links",
    "offline_reply",
    "composer_command",
    "session_window",
)


def connect_host_signal(name: str, receiver: Any) -> None:
    """Connect ``receiver`` to the host's signal ``name`` (one of ``HOST_SIGNALS``) as
    ``settings.HANDOFF_HOST_SIGNALS`` names it, at most once; nothing when the host names none.

    Raises ``ImproperlyConfigured`` naming the setting when it names a signal the handoff does
    not know, a path that does not import, or one that is not a ``Signal``.
    """
    named = handoff_settings().host_signals
    unknown = sorted(set(named) - set(HOST_SIGNALS))
    if unknown:
        raise ImproperlyConfigured(
            f"HANDOFF_HOST_SIGNALS names unknown signals {unknown}; known: {sorted(HOST_SIGNALS)}"
        )
    path = named.get(name)
    if not path:
        return
    try:
        signal = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"HANDOFF_HOST_SIGNALS[{name!r}] = {path!r} does not import: {exc}"
        ) from exc
    if not isinstance(signal, Signal):
        raise ImproperlyConfigured(f"HANDOFF_HOST_SIGNALS[{name!r}] = {path!r} is not a Signal")
    signal.connect(receiver, weak=False, dispatch_uid=f"handoff.{name}")


class HandoffConfig(AppConfig):
    name = "handoff"
    verbose_name = _("Session Handoff")

    def ready(self) -> None:
        """Connect the engine's receivers to the host's signals (each at most once); register
        the system checks of the session model (``handoff.session_model``) and of the other
        settings that name the host (``handoff.checks``)."""
        from handoff import forwarding, metrics, operations
        from handoff.checks import check_host_settings
        from handoff.core.acknowledgement import offline_reply
        from handoff.lineage import records
        from handoff.session_model import check_session_model

        checks.register(check_session_model)
        checks.register(check_host_settings)

        connect_host_signal("session_idle", operations.on_session_idle)
        connect_host_signal("blocker_cleared", operations.on_blocker_cleared)
        connect_host_signal("before_step", forwarding.before_step)
        connect_host_signal("session_links", records.session_links)
        connect_host_signal("offline_reply", offline_reply)
        connect_host_signal("session_window", metrics.session_window)
