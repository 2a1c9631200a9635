"""Channel-layer sends from sync code (``follower.sending``): they arrive, in order."""

from __future__ import annotations

import threading
import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from follower import sending


def test_sends_from_a_plain_thread_arrive_in_the_order_sent():
    """A task worker's events reach the user's group one after another (Redis in CI)."""
    layer = get_channel_layer()
    group = f"sending-{uuid.uuid4().hex}"
    channel = f"sending.{uuid.uuid4().hex}"
    async_to_sync(layer.group_add)(group, channel)

    def worker() -> None:
        for n in range(20):
            sending.group_send(layer, group, {"type": "test.message", "n": n})
        assert sending.flush()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)

    async def receive_all() -> list[int]:
        numbers = [(await layer.receive(channel))["n"] for _ in range(20)]
        await layer.group_discard(group, channel)
        return numbers

    assert async_to_sync(receive_all)() == list(range(20))


async def test_a_send_from_inside_an_event_loop_is_refused_not_blocking_it():
    with pytest.raises(RuntimeError, match="sync code"):
        sending.group_send(get_channel_layer(), "sending-refused", {"type": "test.message"})
