"""Which API responses an import has counted: each one counts once.

A resumed Claude Code session repeats responses of the session it resumed (same ``message.id``
and ``requestId``), and a subagent's log can replay a message of its main under a new
``requestId``: the ``message.id`` names the API response, so its usage counts in the session
that logged it first and nowhere else. The response id is stored on the message carrying the
usage (``Message.response_id``). The ledger knows the responses met by the files of one import;
the writer (``host.importers.writer``) drops the usage of those that messages stored earlier
count, with one look-up per batch.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from host.importers.writer import MAX_NAME


class ResponseLedger:
    """The responses met so far by one import of ``owner``'s files."""

    def __init__(self, owner: User) -> None:
        self.owner = owner
        self._seen: set[str] = set()

    def first_sighting(self, response_id: str) -> bool:
        """Return True the first time this import meets ``response_id``, False after.

        Whether an earlier import counted it is decided when the batch is written.
        """
        response_id = response_id[:MAX_NAME]
        if response_id in self._seen:
            return False
        self._seen.add(response_id)
        return True
