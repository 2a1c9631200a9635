"""Daphne's websockets close oversized frames with a close frame.

Daphne refuses a websocket message over 1 MiB (its ``--websocket-max-message-size``) through
autobahn, whose servers default to ``failByDrop``: the TCP connection is dropped without a close
frame, and the page sees only 1006. ``close_oversized_frames`` turns that option off for
Daphne's websocket factory, so the refused message gets the close code 1009 (message too big),
as RFC 6455 §7.4.1 says, before the connection ends; the page then reconnects as usual.

Why a patch and not an option: Daphne (4.2) sets autobahn's protocol options itself
(``daphne.server.Server``: the ping timeout, null origins, the handshake timeout, the message
and frame size limits) and offers none for ``failByDrop``, neither as an argument of ``Server``
nor on its command line (``--websocket-max-message-size`` and ``--websocket-max-frame-size``
only move the limit; 0 removes it, leaving a client free to make the worker buffer any size).

What it changes for whom: the page never sends more than 1 MiB (its ``hello`` and ``ping`` are
under 100 characters, and the consumer answers a frame over ``follower.consumers.MAX_FRAME``
characters with an error), so only another client (a script, a proxy gone wrong) meets the
limit. Without the patch that client sees the TCP connection end without a close frame, close
code 1006 (abnormal closure), as a network failure looks; with it, 1009 says what was wrong. It
is not a speed matter: no benchmark's target depends on it (docs/benchmarks.md, "Follower:
1 000 sockets on one worker"). ``tests/browser/test_follower.py`` holds the 1009 and the page
still following afterwards.
"""

from __future__ import annotations

from typing import Any

from daphne.ws_protocol import WebSocketFactory

_PATCHED = "_follower_closes_oversized_frames"


def close_oversized_frames() -> None:
    """Make every Daphne websocket factory made from now on send close frames (idempotent)."""
    if getattr(WebSocketFactory, _PATCHED, False):
        return
    reset = WebSocketFactory.resetProtocolOptions

    def reset_with_close_frames(self: Any) -> None:
        reset(self)
        self.failByDrop = False

    WebSocketFactory.resetProtocolOptions = reset_with_close_frames  # type: ignore[method-assign]
    setattr(WebSocketFactory, _PATCHED, True)
