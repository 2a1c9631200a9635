"""Errors the handoff app raises to its callers (commands, API, composer, card).

``HandoffError`` is the base class: catch it, do not raise it directly. Every message is a
sentence a user can act on; nothing has been changed when one of these is raised by an
operation.
"""

from __future__ import annotations


class HandoffError(Exception):
    """Base class of the handoff app's errors (do not raise directly)."""


class SessionNotFound(HandoffError):
    """No session with that id exists (or the id is malformed)."""

    def __init__(self, session_id: object) -> None:
        super().__init__(f"no session {session_id}")
        self.session_id = session_id


class NotAMain(HandoffError):
    """The session is a subagent: only top-level sessions (mains) take part in handoff."""

    def __init__(self, session_id: object) -> None:
        super().__init__(
            f"session {session_id} is a subagent; handoff applies to main sessions only"
        )
        self.session_id = session_id


class ServiceUnavailable(HandoffError):
    """A host service the operation needs was left out (docs/spec.md, Degradation)."""

    def __init__(self, name: str, consequence: str) -> None:
        """``name``: the service (``handoff.services``); ``consequence``: what cannot happen
        without it, in English, marked for translation (pages say it in their language)."""
        super().__init__(f"the host provides no {name} service: {consequence}")
        self.name = name
        self.consequence = consequence


class PhaseError(HandoffError):
    """A record would move backwards or out of a final phase (docs/spec.md, State)."""


class ForwardingError(HandoffError):
    """Input for a redirected session cannot be relayed (e.g. a redirect cycle in storage)."""


class AlreadyHandedOff(HandoffError):
    """The session has a redirect: it was handed off and is a relay now."""

    def __init__(self, session_id: object, destination: object) -> None:
        super().__init__(
            f"session {session_id} was already handed off to {destination}; "
            "'disable' on it stops forwarding"
        )
        self.session_id = session_id
        self.destination = destination


class NoReviewWaiting(HandoffError):
    """Commit or discard was asked for, but no handoff of the session waits for review."""

    def __init__(self, session_id: object) -> None:
        super().__init__(f"no handoff of session {session_id} is waiting for review")
        self.session_id = session_id


class CommitsInItsTerminal(HandoffError):
    """Commit was asked for a terminal session's brief waiting for review: its runtime commits
    it when it starts the successor (docs/spec.md, Agent hooks); nothing changed."""

    def __init__(self, session_id: object, asks: object) -> None:
        """``asks``: what the session's page asks of the user instead (``/clear`` in its
        terminal, the new-terminal command, or discard), in the active language."""
        super().__init__(
            f"session {session_id} runs in a terminal: its handoff commits there, not here ({asks})"
        )
        self.session_id = session_id


class InvalidBrief(HandoffError):
    """An edited brief breaks the brief's rules (schema, 40 000 characters); nothing changed."""


class ReviewFailed(HandoffError):
    """A reviewed handoff was committed but failed (e.g. new input arrived while it waited):
    the record is ``failed`` and its draft discarded; the source is untouched."""


class ReviewWaiting(HandoffError):
    """A handoff of the session already waits for review: commit or discard it first."""

    def __init__(self, session_id: object) -> None:
        super().__init__(
            f"a handoff of session {session_id} is waiting for review: commit or discard it"
        )
        self.session_id = session_id
