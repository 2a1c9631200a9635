"""The ``status_channel`` service (seed 003 §6.3, webServer row: "status channel unavailable")."""

from __future__ import annotations

import asyncio

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer

PROBE_TIMEOUT = 1.0
"""Seconds a round trip through the channel layer may take before it counts as unreachable."""


class StatusChannel:
    """Tells whether the follower's live channel works (``HANDOFF_SERVICES["status_channel"]``)."""

    def available(self) -> bool:
        """Return True when a channel layer is configured and a message makes a round trip.

        Sends one probe to a fresh channel and reads it back within ``PROBE_TIMEOUT`` seconds;
        any error of the layer (Redis down, bad configuration) means False. Call from sync code.
        """
        try:
            layer = get_channel_layer()
            return layer is not None and bool(async_to_sync(self._round_trip)(layer))
        except Exception:
            return False

    @staticmethod
    async def _round_trip(layer: BaseChannelLayer) -> bool:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "status.probe"})
        message = await asyncio.wait_for(layer.receive(channel), PROBE_TIMEOUT)
        return bool(message.get("type") == "status.probe")
