"""The agent hooks' settings, with the defaults a host that sets none of them gets.

``agent_hooks_settings()`` returns them as one typed object, ``AgentHooksSettings``, read from
``django.conf.settings`` at each call (``common.app_settings``), so ``override_settings``
applies to the next read. (The terminal brief's folder, ``AGENT_HOOKS_BRIEF_DIR``, is the
handoff's: ``handoff.conf``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from common.app_settings import read

WEEK = 7 * 24 * 3600


@dataclass(frozen=True)
class AgentHooksSettings:
    """The agent hooks' settings (name: unit, default — meaning).

    - ``AGENT_HOOKS_DELIVERY_RETENTION`` (``delivery_retention``): seconds, 604 800 (7 days) —
      how long a hook delivery and its answer are kept for a retry of it
      (``agent_hooks.deliveries.prune``).
    """

    delivery_retention: int = WEEK


def agent_hooks_settings() -> AgentHooksSettings:
    """Return the agent hooks' settings as the host sets them now, each unset one its default."""
    return read(AgentHooksSettings, "AGENT_HOOKS_")
