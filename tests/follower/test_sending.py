"""Channel-layer sends from sync code (``follower.sending``): they arrive, in order."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any
from unittest import mock

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from follower import sending
from follower.consumers import FollowConsumer


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


@pytest.mark.django_db(transaction=True)
async def test_an_in_memory_send_from_any_thread_runs_on_the_loop_its_hub_receives_on(
    ada: Any, settings: Any
):
    """The in-memory layer's queues are not thread-safe: a send from a plain thread (not one
    ``sync_to_async`` runs code in) goes onto the loop of the process's hub, in order."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.FOLLOWER_POLL_INTERVAL = 0
    communicator = WebsocketCommunicator(FollowConsumer.as_asgi(), "/ws/follow/")
    communicator.scope["user"] = ada
    assert (await communicator.connect())[0]  # the hub starts on this loop
    layer = get_channel_layer()
    sent: list[tuple[str, int]] = []
    original = layer.group_send

    async def recorded(group: str, message: dict[str, Any]) -> None:
        sent.append((threading.current_thread().name, message["n"]))
        await original(group, message)

    def send_two() -> None:
        for n in (1, 2):
            sending.group_send(layer, "plain", {"type": "t", "n": n})

    with mock.patch.object(layer, "group_send", recorded):
        worker = threading.Thread(target=send_two)
        worker.start()
        await asyncio.to_thread(worker.join, 5)
        for _ in range(50):
            if len(sent) == 2:
                break
            await asyncio.sleep(0.01)
    await communicator.disconnect()
    here = threading.current_thread().name
    assert sent == [(here, 1), (here, 2)]
