"""The follower's settings, with the defaults a host that sets none of them gets.

``follower_settings()`` returns them as one typed object, ``FollowerSettings``, read from
``django.conf.settings`` at each call (``common.app_settings``), so ``override_settings``
applies to the next read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from common.app_settings import read


@dataclass(frozen=True)
class FollowerSettings:
    """The follower's settings (name: unit, default — meaning).

    - ``FOLLOWER_SOURCES`` (``sources``): dotted paths, default none — the apps that feed the
      follower, in order (``follower.sources``);
    - ``FOLLOWER_POLL_INTERVAL`` (``poll_interval``): seconds, 0.1 — how often a process's hub
      reads the stored events when the channel layer is in memory (0: never; ``follower.hub``);
    - ``FOLLOWER_EVENT_LIMIT`` (``event_limit``): events, 1 000 — the newest events kept per
      user; older ones are pruned and a page behind them resyncs (``follower.events``);
    - ``FOLLOWER_EVENT_RETENTION`` (``event_retention``): seconds, 600 — how long an event is
      kept for a page to catch up.
    """

    sources: Sequence[str] = ()
    poll_interval: float = 0.1
    event_limit: int = 1000
    event_retention: int = 600


def follower_settings() -> FollowerSettings:
    """Return the follower's settings as the host sets them now, each unset one its default."""
    return read(FollowerSettings, "FOLLOWER_")
