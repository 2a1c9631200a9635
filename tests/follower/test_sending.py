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


@pytest.mark.django_db(transaction=True)
def test_a_transactions_burst_of_events_waiting_for_the_layer_leaves_as_one_message(
    ada: Any, publish_burst: Any
):
    """A handoff's route publishes four events in one transaction: while the layer is busy
    with an earlier send they queue, then leave together (one ``group_send``, four Redis round
    trips with channels-redis, instead of one per event), in order."""
    layer = get_channel_layer()
    busy, release = threading.Event(), threading.Event()
    sent: list[dict[str, Any]] = []

    async def recorded(group: str, message: dict[str, Any]) -> None:
        sent.append(message)
        if len(sent) == 1:
            busy.set()
            await asyncio.to_thread(release.wait, 10)

    with mock.patch.object(layer, "group_send", recorded):
        sending.group_send(layer, "elsewhere", {"type": "test.message", "batch": ["earlier"]})
        assert busy.wait(10)
        burst = publish_burst(ada.pk)
        release.set()
        assert sending.flush()
    assert sent == [
        {"type": "test.message", "batch": ["earlier"]},
        {"type": "follow.events", "user": ada.pk, "batch": burst},
    ]


def test_only_alike_messages_in_a_row_for_one_group_are_merged_and_at_most_the_limit():
    layer, other = mock.Mock(), mock.Mock()

    def event(n: int, user: int = 1) -> dict[str, Any]:
        return {"type": "follow.events", "user": user, "batch": [n]}

    queued = [
        (layer, "a", event(1)),
        (layer, "a", event(2)),
        (layer, "b", event(3)),
        (layer, "a", event(4)),
        (layer, "a", {"type": "follow.signed_out", "session_key": "k"}),
        (layer, "a", event(5)),
        (other, "a", event(6)),
        (layer, "a", event(7, user=2)),
    ]
    assert sending.merged(queued) == [
        (layer, "a", {"type": "follow.events", "user": 1, "batch": [1, 2]}),
        *queued[2:],
    ]
    many = [(layer, "a", event(n)) for n in range(sending.BATCH_LIMIT + 1)]
    assert [len(m["batch"]) for _, _, m in sending.merged(many)] == [sending.BATCH_LIMIT, 1]
