"""Tabs never go deaf: a private Redis restarted empty or paused under open sockets.

Every event reaches every tab within ``RETURN_WINDOW`` seconds of Redis returning, in order and
once; a send after a commit does not wait for a paused Redis. The Redis is one of our own
(``bench.outages.PrivateRedis``, port ``FOLLOWER_TEST_REDIS_PORT``, default 6392), never the
shared one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AbstractBaseUser
from published import publish_phases

from bench.outages import PrivateRedis
from follower import sending
from follower.consumers import FollowConsumer

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

RETURN_WINDOW = 5.0
"""Seconds after Redis returns within which every tab has every event."""

TABS = 3


@pytest.fixture
def redis(settings: Any) -> Iterator[PrivateRedis]:
    """A Redis of our own as the channel layer (the shape ``config.settings`` gives REDIS_URL)."""
    server = PrivateRedis(int(os.environ.get("FOLLOWER_TEST_REDIS_PORT", "6392")))
    host = {"address": server.url, "socket_timeout": 15}
    backend = "channels_redis.core.RedisChannelLayer"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": backend, "CONFIG": {"hosts": [host]}}}
    yield server
    server.close()


@pytest.fixture
async def tabs(ada: AbstractBaseUser, redis: PrivateRedis) -> AsyncIterator[list[Any]]:
    """``TABS`` follower sockets of ada's pages, each past its ``ready``."""
    opened = []
    for _ in range(TABS):
        communicator = WebsocketCommunicator(FollowConsumer.as_asgi(), "/ws/follow/")
        communicator.scope["user"] = ada
        assert (await communicator.connect())[0]
        await communicator.send_json_to({"type": "hello", "last_event_id": None})
        assert (await communicator.receive_json_from(5))["type"] == "ready"
        opened.append(communicator)
    yield opened
    for communicator in opened:
        # A tab whose receive timed out was cancelled by the communicator: nothing to close.
        with contextlib.suppress(asyncio.CancelledError):
            await communicator.disconnect()


async def emit(user: AbstractBaseUser, count: int) -> list[int]:
    """Publish ``count`` events for ``user`` (as a request would); return their ids."""
    ids = []
    for n in range(count):
        (frame,) = await database_sync_to_async(publish_phases)(user.pk, f"phase {n}")
        ids.append(frame["id"])
    return ids


async def received(tab: Any, ids: list[int]) -> list[int]:
    """The event ids ``tab`` gets until it has the last of ``ids`` (each frame within the
    window), then whatever else comes at once (a duplicate would)."""
    got: list[int] = []
    while not got or got[-1] < ids[-1]:
        frame = await tab.receive_json_from(RETURN_WINDOW)
        if frame["type"] == "event":
            got.append(frame["id"])
    assert await tab.receive_nothing(0.5)
    return got


async def test_every_tab_gets_every_event_in_order_after_redis_restarts_empty(ada, redis, tabs):
    before = await emit(ada, 2)
    await asyncio.to_thread(redis.stop)
    during = await emit(ada, 3)
    await asyncio.to_thread(redis.start)
    after = await emit(ada, 3)
    for tab in tabs:
        assert await received(tab, before + during + after) == before + during + after


async def test_every_tab_gets_every_event_in_order_after_redis_was_paused(ada, redis, tabs):
    """No later event shows the tabs a gap: the events sent while paused must come by themselves."""
    before = await emit(ada, 2)
    redis.pause()
    during = await emit(ada, 3)
    await asyncio.sleep(sending.SEND_TIMEOUT + 1)  # the first send is given up meanwhile
    redis.resume()
    for tab in tabs:
        assert await received(tab, before + during) == before + during


async def test_a_send_after_a_commit_does_not_wait_for_a_paused_redis(redis):
    """``group_send`` returns while Redis is still stopped; the message leaves once it goes on."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("paused", channel)
    redis.pause()
    try:
        await asyncio.to_thread(sending.group_send, layer, "paused", {"type": "test.message"})
    finally:
        redis.resume()
    assert (await asyncio.wait_for(layer.receive(channel), RETURN_WINDOW))["type"] == "test.message"
