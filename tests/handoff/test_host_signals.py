"""The host's signals the handoff connects to are named by the host's settings alone
(``HANDOFF_HOST_SIGNALS``; the handoff knows the hooks, ``handoff.apps.HOST_SIGNALS``, and names
no host's)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.dispatch import Signal
from django.utils.module_loading import import_string

from handoff.apps import HOST_SIGNALS, connect_host_signal

OTHER_HOST_SIGNAL = Signal()


def _receiver(sender: Any, **kwargs: Any) -> str:
    return "answered"


def test_this_hosts_signals_are_named_by_its_settings_and_all_connected():
    named = django_settings.HANDOFF_HOST_SIGNALS
    assert set(named) == set(HOST_SIGNALS)
    for name, path in named.items():
        assert path is not None
        signal = import_string(path)
        assert signal.has_listeners(), name


def test_another_host_names_its_own_signal(settings: Any):
    settings.HANDOFF_HOST_SIGNALS = {"offline_reply": f"{__name__}.OTHER_HOST_SIGNAL"}
    connect_host_signal("offline_reply", _receiver)
    try:
        assert OTHER_HOST_SIGNAL.send(sender=None, content="x") == [(_receiver, "answered")]
    finally:
        OTHER_HOST_SIGNAL.disconnect(dispatch_uid="handoff.offline_reply")


def test_a_hook_the_host_leaves_out_is_not_connected(settings: Any):
    settings.HANDOFF_HOST_SIGNALS = {"offline_reply": None}
    connect_host_signal("offline_reply", _receiver)
    assert not OTHER_HOST_SIGNAL.has_listeners()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"session_done": "host.signals.session_idle"}, "unknown signals \\['session_done'\\]"),
        ({"offline_reply": "host.signals.announce"}, "is not a Signal"),
        ({"offline_reply": "host.signals.nowhere"}, "HANDOFF_HOST_SIGNALS.*does not import"),
    ],
)
def test_a_wrong_name_or_path_is_refused(settings: Any, override: dict[str, str], message: str):
    settings.HANDOFF_HOST_SIGNALS = override
    with pytest.raises(ImproperlyConfigured, match=message):
        connect_host_signal("offline_reply", _receiver)
