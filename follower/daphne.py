"""Daphne's websockets close oversized frames with a close frame.

Daphne refuses a websocket message over 1 MiB (its ``--websocket-max-message-size``) through
autobahn, whose servers default to ``failByDrop``: the TCP connection is dropped without a close
frame, and the page sees only 1006. ``close_oversized_frames`` turns that option off for
Daphne's websocket factory, so the refused message gets the close code 1009 (message too big),
as RFC 6455 §7.4.1 says, before the connection ends; the page then reconnects as usual.
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
