"""Send channel-layer messages from sync code without waiting for the layer.

Follower events are stored before they are sent, so a request (or a task) never needs to wait
for the channel layer: ``group_send`` queues the message and returns at once, whether Redis is
fast, restarting or paused, and the pages catch up from storage on whatever the layer missed
(``follower.hub``). It runs:

- on the in-memory layer, on the event loop its hub receives on in this process (a Daphne
  process's loop, where the consumers wait), handed over with ``loop.call_soon_threadsafe``:
  the in-memory layer's queues are not thread-safe (it does no I/O). The hub names its loop
  (``receiving``) when it starts, so no thread has to tell whether it is a server's (asgiref
  offers no public way to ask);
- everywhere else (another layer, or no hub's loop running) through the process's ``Sender``:
  one loop in a daemon thread (made anew after a fork) and one task on it that sends the queued
  messages one after another, so they leave in the order they were queued, each given at most
  ``SEND_TIMEOUT`` seconds. Messages that carry a list under ``BATCH`` and wait one behind
  the other for the same layer and group, alike but for that list, leave as one message with
  the lists joined (``merged``): a transaction's burst of follower events costs one
  ``group_send`` (four Redis round trips with channels-redis), not one per event. A process
  that exits waits for its queue (``flush``, at most ``SEND_TIMEOUT`` seconds) so it loses
  none while the layer answers.
  ``asgiref.sync.async_to_sync`` is not used: from a plain thread it starts a thread and a
  fresh event loop per call, and channels-redis fresh connections.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import weakref
from typing import Any

from channels.layers import BaseChannelLayer, InMemoryChannelLayer

logger = logging.getLogger(__name__)

SEND_TIMEOUT = 5.0
"""Seconds one queued ``group_send`` may take before it is given up (and logged)."""

QUEUE_LIMIT = 10_000
"""Messages a process holds for a layer that does not answer; more are dropped (and logged)."""

Message = tuple[BaseChannelLayer, str, dict[str, Any]]
"""A queued send: the layer, the group and the message."""

BATCH = "batch"
"""The key of a message's list that queued messages alike but for it may join (``merged``)."""

BATCH_LIMIT = 100
"""Items one merged message carries at most."""


def merged(queued: list[Message]) -> list[Message]:
    """Return ``queued`` (in order) with each run of consecutive messages to the same layer
    and group that are alike but for their ``BATCH`` lists joined into one message (at most
    ``BATCH_LIMIT`` items); messages without a ``BATCH`` list are left as they are."""
    out: list[Message] = []
    for layer, group, message in queued:
        if out and _joins(out[-1], (layer, group, message)):
            last = out[-1][2]
            out[-1] = (layer, group, last | {BATCH: [*last[BATCH], *message[BATCH]]})
        else:
            out.append((layer, group, message))
    return out


def _joins(before: Message, after: Message) -> bool:
    """Whether ``after`` may join ``before``'s ``BATCH`` list."""
    (layer, group, message), (next_layer, next_group, next_message) = before, after
    batches = message.get(BATCH), next_message.get(BATCH)
    if not all(isinstance(batch, list) for batch in batches):
        return False
    rest = {k: v for k, v in message.items() if k != BATCH}
    return (
        layer is next_layer
        and group == next_group
        and rest == {k: v for k, v in next_message.items() if k != BATCH}
        and len(message[BATCH]) + len(next_message[BATCH]) <= BATCH_LIMIT
    )


class Sender:
    """One process's sending loop and its queue, sent in order by one task."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.queue: asyncio.Queue[Message] = asyncio.Queue(QUEUE_LIMIT)
        thread = threading.Thread(target=self.loop.run_forever, name="follower-sender", daemon=True)
        thread.start()
        asyncio.run_coroutine_threadsafe(self._drain(), self.loop)

    def put(self, message: Message) -> None:
        """Queue ``message`` from any thread; returns at once."""
        self.loop.call_soon_threadsafe(self._put, message)

    def _put(self, message: Message) -> None:
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            logger.warning(
                "follower: %s messages wait for the channel layer; one dropped", QUEUE_LIMIT
            )

    async def _drain(self) -> None:
        while True:
            queued = [await self.queue.get()]
            while not self.queue.empty():
                queued.append(self.queue.get_nowait())
            try:
                for layer, group, message in merged(queued):
                    await _send_logged(layer, group, message, SEND_TIMEOUT)
            finally:
                for _ in queued:
                    self.queue.task_done()

    def flush(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the queue to be sent; return whether it was."""
        future = asyncio.run_coroutine_threadsafe(self.queue.join(), self.loop)
        try:
            future.result(timeout)
        except TimeoutError:
            future.cancel()
            return False
        return True


_lock = threading.Lock()
_sender: Sender | None = None


def _forget_after_fork() -> None:
    """In a forked child: the parent's loop thread did not come along, and ``_lock`` may have
    been held by another of the parent's threads; start afresh."""
    global _lock, _sender
    _lock, _sender = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_after_fork)


def _process_sender() -> Sender:
    """Return this process's sender, starting it on first use (and after a fork)."""
    global _sender
    with _lock:
        if _sender is None or _sender.pid != os.getpid():
            _sender = Sender()
        return _sender


@atexit.register
def flush(timeout: float = SEND_TIMEOUT) -> bool:
    """Wait at most ``timeout`` seconds for this process's queued messages to be sent.

    Returns True when nothing is left (also when nothing was ever queued). Runs at exit.
    """
    sender = _sender
    if sender is None or sender.pid != os.getpid():
        return True
    return sender.flush(timeout)


_receivers: weakref.WeakKeyDictionary[BaseChannelLayer, asyncio.AbstractEventLoop] = (
    weakref.WeakKeyDictionary()
)
"""The loop each in-memory layer's messages are received on in this process (its hub's)."""


def receiving(layer: BaseChannelLayer, loop: asyncio.AbstractEventLoop) -> None:
    """Note that ``loop`` receives ``layer``'s messages here: an in-memory layer's sends go
    onto it from then on, whatever thread makes them (``follower.hub`` calls this)."""
    _receivers[layer] = loop


def _receiving_loop(layer: BaseChannelLayer) -> asyncio.AbstractEventLoop | None:
    """The running loop that receives the in-memory ``layer``'s messages here, or None."""
    loop = _receivers.get(layer) if isinstance(layer, InMemoryChannelLayer) else None
    return loop if loop is not None and loop.is_running() else None


async def _send_logged(
    layer: BaseChannelLayer, group: str, message: dict[str, Any], timeout: float | None = None
) -> None:
    """Send ``message`` to ``group``; a failure, or ``timeout`` seconds passing, is logged."""
    try:
        await asyncio.wait_for(layer.group_send(group, message), timeout)
    except Exception as error:
        logger.warning("follower: a message to %s was not sent: %r", group, error)


def group_send(layer: BaseChannelLayer, group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` on ``layer`` from sync code, without waiting for the layer.

    The message is queued and sent after every message queued before it in this process; a
    layer that fails or takes over ``SEND_TIMEOUT`` seconds loses it (logged). Raises
    ``RuntimeError`` when called from a thread running an event loop (await
    ``layer.group_send`` there).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("group_send is for sync code: await layer.group_send in a loop")
    loop = _receiving_loop(layer)
    if loop is not None:
        # Tasks start in the order they were created; the in-memory send does not wait.
        loop.call_soon_threadsafe(loop.create_task, _send_logged(layer, group, message))
        return
    _process_sender().put((layer, group, message))
