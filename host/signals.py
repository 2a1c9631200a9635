"""Signals the host sends so plugins (the handoff app, the follower) hook in without imports.

- ``session_idle(sender=Session, session=Session)``: a session turned idle (after commit).
- ``blocker_cleared(sender=Session, session=Session, blocker=str)``: something that deferred a
  handoff went away (an owned agent disposed, the inbox drained, an activity ended).
- ``before_step(sender=Session, session=Session, incoming=list[Message])``: input arrived for a
  session (seed 000, Forwarding: ``beforeStep``). A receiver returns a ``StepRejected`` to take
  the input away from this session; the host then does not start a turn.
- ``composer_command(sender=Session, session=Session, user=User, command=str, argument=str)``: a
  slash command typed in the chat composer that the host does not handle itself (``/handoff
  status``: command "handoff", argument "status"). The receiver that knows ``command`` returns a
  ``CommandReply``; the others return None.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.dispatch import Signal

session_idle = Signal()
blocker_cleared = Signal()
before_step = Signal()
composer_command = Signal()


@dataclass(frozen=True)
class StepRejected:
    """A ``before_step`` answer: the input went to ``forwarded_to`` under ``relay_id``."""

    forwarded_to: str
    relay_id: str


@dataclass(frozen=True)
class CommandReply:
    """A ``composer_command`` answer: ``text`` for the user; ``html`` (trusted) shows it richly."""

    text: str
    ok: bool = True
    html: str = ""
