"""The plain host's part of the follower (``FOLLOWER_SOURCES``, ``follower.sources``).

Like ``host/follow.py`` on the reference host: ``chat.conversation_changed`` becomes
``session.added`` / ``session.updated`` with the conversation's row, and the snapshot's
``sessions`` are the user's rows. A row is ``{"id", "title", "status", "archived", "blank"}``
(``blank``: never started) plus the columns other sources add (the handoff's ``redirect_to``);
``row_html`` is the row as this host's own template renders it (``ROW``); the handoff's events
about a conversation reach its owner (``owner``) and carry its row (``row``).
"""

from __future__ import annotations

from typing import Any

from follower.fragments import render
from follower.sources import Payload, Renders, Source, publish
from tests.plain_host import chat
from tests.plain_host.models import Conversation

ROW = "plain_host/_row.html"
"""The plain host's conversation row."""

ADDED, UPDATED = "session.added", "session.updated"
"""The events a page applies rows from (the kinds the handoff's jump rules read)."""


KEYS = ("id", "redirect_to")
"""The columns that hold a conversation's key (its own, the handoff's destination): text in a
row, whether the key is a UUID or an integer."""


def _row(values: dict[str, Any]) -> dict[str, Any]:
    """A row from a conversation's values: ``woken`` shown as ``blank``, keys as text."""
    row = {
        name: str(value) if name in KEYS and value is not None else value
        for name, value in values.items()
        if name != "woken"
    }
    return row | {"blank": not values["woken"]}


class ConversationSource(Source):
    """Conversation rows for the follower (see the module docstring)."""

    kinds = {ADDED: Renders((ROW,)), UPDATED: Renders((ROW,))}

    def connect(self) -> None:
        """Publish what ``chat.conversation_changed`` announces."""
        chat.conversation_changed.connect(
            self.changed, dispatch_uid="plain_host.follow", weak=False
        )

    def row(self, key: str) -> Payload | None:
        """Return ``{"owner", "session": row, "row_html"}`` of conversation ``key`` as stored
        now (None: no such conversation)."""
        values = Conversation.objects.filter(pk=key).values("id", "owner_id", *chat.ROW_FIELDS)
        found = values.annotate(**self.row_columns).first()
        if found is None:
            return None
        owner = found.pop("owner_id")
        row = _row(found)
        return {"owner": owner, "session": row, "row_html": render(ROW, row)}

    def owner(self, key: str) -> int | None:
        """Return the owner of conversation ``key`` (None: no such conversation; one query)."""
        return Conversation.objects.filter(pk=key).values_list("owner_id", flat=True).first()

    def changed(self, conversation_id: Any, created: bool = False, **kwargs: Any) -> None:
        """Publish ``session.added`` (created) or ``session.updated``, stored as
        ``{"session_id"}``; the row is added after the commit (``render``)."""
        owner = Conversation.objects.filter(pk=conversation_id).values_list("owner_id", flat=True)
        for owner_id in owner:
            stored = {"session_id": str(conversation_id)}
            publish(owner_id, ADDED if created else UPDATED, stored)

    def render(self, kind: str, payload: Payload) -> Payload | None:
        """The row of a stored ``session.added`` / ``session.updated`` as stored now (None:
        the conversation is gone)."""
        if "session_id" not in payload:
            return payload
        found = self.row(payload["session_id"])
        return {k: v for k, v in found.items() if k != "owner"} if found else None

    def snapshot(self, user_id: int, into: Payload) -> None:
        """Add ``"sessions": [row, ...]``, the user's conversations (one query)."""
        rows = Conversation.objects.filter(owner_id=user_id).order_by("title", "pk")
        values = rows.values("id", *chat.ROW_FIELDS, **self.row_columns)
        into["sessions"] = [_row(v) for v in values]
