"""Which API responses an owner's imports have counted: each one counts once (issue 9).

A resumed Claude Code session repeats responses of the session it resumed (same ``message.id``
and ``requestId``), and a subagent's log can replay a message of its main under a new
``requestId``: the ``message.id`` names the API response, so its usage counts in the session
that logged it first and nowhere else. The response id is stored on the message carrying the
usage (``Message.response_id``), so later imports see it.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from host.importers.writer import MAX_NAME
from host.models import Message


class ResponseLedger:
    """The responses counted so far by one owner's imports, this one included."""

    def __init__(self, owner: User) -> None:
        self.owner = owner
        self._seen: set[str] = set()

    def first_sighting(self, response_id: str) -> bool:
        """Return True the first time ``response_id`` is met for the owner, False after.

        Meeting it in this import (still buffered or written) or in an earlier import counts.
        """
        response_id = response_id[:MAX_NAME]
        if response_id in self._seen:
            return False
        self._seen.add(response_id)
        counted = Message.objects.filter(session__owner=self.owner, response_id=response_id)
        return not counted.exists()
