"""The ``status_channel`` service (seed 003 §6.3, webServer row: "status channel unavailable")."""

from __future__ import annotations

import asyncio
import time
import weakref

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer

PROBE_TIMEOUT = 1.0
"""Seconds a round trip through the channel layer may take before it counts as unreachable."""

ANSWER_KEPT = 2.0
"""Seconds a probe's answer stands for its layer in this process before the next probe."""

_answers: weakref.WeakKeyDictionary[BaseChannelLayer, tuple[float, bool]] = (
    weakref.WeakKeyDictionary()
)
"""Per layer: when it was last probed (``time.monotonic``) and whether the probe came back."""


class StatusChannel:
    """Tells whether the follower's live channel works (``HANDOFF_SERVICES["status_channel"]``)."""

    def available(self) -> bool:
        """Return True when a channel layer is configured and a message makes a round trip.

        Sends one probe to a fresh channel and reads it back within ``PROBE_TIMEOUT`` seconds;
        any error of the layer (Redis down, bad configuration) means False. The answer stands
        for ``ANSWER_KEPT`` seconds per layer: every status report asks (each handoff panel a
        page or an event renders), and a probe from a task worker's thread costs an event loop
        and a Redis connection of its own. Call from sync code.
        """
        try:
            layer = get_channel_layer()
        except Exception:
            return False
        if layer is None:
            return False
        now = time.monotonic()
        known = _answers.get(layer)
        if known is not None and now - known[0] < ANSWER_KEPT:
            return known[1]
        try:
            answer = bool(async_to_sync(self._round_trip)(layer))
        except Exception:
            answer = False
        _answers[layer] = (now, answer)
        return answer

    @staticmethod
    async def _round_trip(layer: BaseChannelLayer) -> bool:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "status.probe"})
        message = await asyncio.wait_for(layer.receive(channel), PROBE_TIMEOUT)
        return bool(message.get("type") == "status.probe")
