"""Signals the host sends so plugins (the handoff app, the follower) hook in without imports.

- ``session_idle(sender=Session, session=Session)``: a session turned idle (after commit).
- ``blocker_cleared(sender=Session, session=Session, blocker=str)``: something that deferred a
  handoff went away (an owned agent disposed, the inbox drained, an activity ended).
- ``before_step(sender=Session, session=Session, incoming=list[Message])``: input arrived for a
  session (docs/spec.md, Forwarding and cycles). A receiver returns a ``StepRejected`` to take
  the input away from this session; the host then does not start a turn.
- ``session_changed(sender=Session, session_id=UUID, created=bool, owner_id=int | None)``:
  something a page shows of the session (its sidebar row: ``SIDEBAR_FIELDS``) changed, or it
  was created; ``owner_id`` is its owner when the writer has it in hand (None: not given).
  Sent inside the writer's transaction, so a receiver's writes commit or roll back with the
  change; every writer of those columns sends it (a queryset ``update()`` too), and no other
  write does.
- ``entry_appended(sender=Session, session=Session, entry=Message | SessionEvent)``: a live
  write appended one entry to the session's log (``host.log``; an import does not announce its
  entries: no page shows a session before its import commits). Sent inside the writer's
  transaction, like ``session_changed``.
- ``entries_appended(sender=Session, session=Session, entries=list[Message | SessionEvent] |
  None)``: a followed log's step appended entries to a session that existed before it
  (``host.importers.live``), announced once per step, inside its transaction: ``entries`` in
  ``seq`` order, or None when there were too many to send one by one (a page reads its log
  again).
- ``composer_command(sender=Session, session=Session, user=User, command=str, argument=str)``: a
  slash command typed in the chat composer that the host does not handle itself (``/handoff
  status``: command "handoff", argument "status"). The receiver that knows ``command`` returns an
  answer with ``CommandReply``'s attributes (its own type: the host is imported by no plugin
  for it); the others return None.
- ``session_links(sender=Session, session_ids=list[UUID])``: which sessions were handed off to
  which (docs/design.md, Lineage). A receiver returns ``{source id: successor id}`` for every hop
  into or out of ``session_ids`` it knows of (or None); the sidebar folds each chain into its
  newest session's row.
- ``offline_reply(sender=Session, session=Session, content=str)``: the offline agent (no model
  configured) answers a plugin's input ``content`` (the brief a successor is seeded with). A
  receiver returns the answer's text for input it posted (or None); without one the agent
  acknowledges it as it does a typed message.
- ``session_window(sender=Session, session=Session, model=str)``: the agent asks for the context
  window (tokens) to fit what it sends ``model`` for ``session`` into. A plugin that keeps its
  own windows (the handoff's Settings, read as its context meter reads them) returns that
  window, or None; without a positive answer the agent uses the host's table
  (``HOST_CONTEXT_WINDOWS``, then the window the session's transcript stated).
- ``log_followed(sender=Session, session=Session)``: a followed log's step stored messages in
  the main session ``session`` (``host.importers.live.follow_step``), sent once per step after
  its transaction (inside a caller's, when the step runs in one: the hook route's catch-up).
  A receiver may write; what it raises is logged, never the step's failure.
- ``folder_switched(sender=FollowedFolder, owner_id=int, path=str, on=bool)``: a user switched
  following a runtime's sessions folder on or off (``host.folders.switch_folder``). Sent inside
  the writer's transaction, like ``session_changed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from django.dispatch import Signal

from host.models import Session

SIDEBAR_FIELDS = ("title", "blank", "workspace_id", "archived", "status")
"""The session columns a page's sidebar row shows: a change to any of them is announced."""

session_idle = Signal()
blocker_cleared = Signal()
before_step = Signal()
composer_command = Signal()
session_changed = Signal()
session_links = Signal()
entry_appended = Signal()
entries_appended = Signal()
offline_reply = Signal()
session_window = Signal()
folder_switched = Signal()
log_followed = Signal()


def announce(session_id: Any, *, created: bool = False, owner_id: Any = None) -> None:
    """Send ``session_changed`` for ``session_id`` (owned by ``owner_id`` when the caller has
    it: the follower then reads no owner); call it inside the write's transaction."""
    session_changed.send(sender=Session, session_id=session_id, created=created, owner_id=owner_id)


@dataclass(frozen=True)
class StepRejected:
    """A ``before_step`` answer: the input went to ``forwarded_to`` under ``relay_id``."""

    forwarded_to: str
    relay_id: str


class CommandReply(Protocol):
    """What a ``composer_command`` answer has (any object with these attributes: the plugin
    makes its own, e.g. ``handoff.web.commands.CommandReply``): ``text`` for the user, ``ok``
    (False: a refusal, nothing changed), ``html`` (trusted) to show it richly ("": none)."""

    @property
    def text(self) -> str: ...

    @property
    def ok(self) -> bool: ...

    @property
    def html(self) -> str: ...
