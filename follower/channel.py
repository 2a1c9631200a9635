"""The ``status_channel`` service (docs/spec.md, Degradation: "status channel unavailable")."""

from __future__ import annotations

import asyncio
import logging
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

logger = logging.getLogger(__name__)


class _Unbuilt:
    """Whether building the configured layer failed at the last look (logged once per change)."""

    failing = False


def _configured_layer() -> BaseChannelLayer | None:
    """Return the configured channel layer (``None``: none is configured, or it cannot be built;
    the latter is logged once per change)."""
    try:
        layer = get_channel_layer()
    except Exception:
        if not _Unbuilt.failing:
            logger.exception("the channel layer cannot be built: the status channel is down")
        _Unbuilt.failing = True
        return None
    _Unbuilt.failing = False
    return layer


class StatusChannel:
    """Tells whether the follower's live channel works (``HANDOFF_SERVICES["status_channel"]``)."""

    def available(self) -> bool:
        """Return True when a channel layer is configured and a message makes a round trip.

        Sends one probe to a fresh channel and reads it back within ``PROBE_TIMEOUT`` seconds;
        any error of the layer (Redis down, bad configuration) means False, and is logged at
        ERROR with its traceback once per change to down (a layer's first probe failing, or
        one after a probe that came back), not at every look. The answer stands
        for ``ANSWER_KEPT`` seconds per layer: every status report asks (each handoff panel a
        page or an event renders), and a probe from a task worker's thread costs an event loop
        and a Redis connection of its own. Call from sync code.
        """
        layer = _configured_layer()
        if layer is None:
            return False
        now = time.monotonic()
        known = _answers.get(layer)
        if known is not None and now - known[0] < ANSWER_KEPT:
            return known[1]
        answer = self._probe(layer, was_up=known is None or known[1])
        _answers[layer] = (now, answer)
        return answer

    def _probe(self, layer: BaseChannelLayer, *, was_up: bool) -> bool:
        """Return whether a probe makes the round trip; log the change when ``was_up`` and not."""
        failure: Exception | None = None
        try:
            answer = bool(async_to_sync(self._round_trip)(layer))
        except Exception as exc:
            answer, failure = False, exc
        if was_up and not answer:
            logger.error(
                "the channel layer is unreachable: the status channel is down", exc_info=failure
            )
        return answer

    @staticmethod
    async def _round_trip(layer: BaseChannelLayer) -> bool:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "status.probe"})
        message = await asyncio.wait_for(layer.receive(channel), PROBE_TIMEOUT)
        return bool(message.get("type") == "status.probe")
