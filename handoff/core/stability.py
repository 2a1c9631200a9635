"""``stable()`` (docs/spec.md, Stability), re-checked before every step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from handoff.core.phases import Reason


@dataclass(frozen=True)
class StabilityFacts:
    """A fresh read of the source, its blockers and the switches (settings re-read too)."""

    disposed: bool
    idle: bool
    revision: int
    archived: bool
    blockers: Sequence[str]
    auto_handoff: bool
    enabled: bool
    requested: bool


def instability(facts: StabilityFacts, *, revision: int, reason: Reason) -> str | None:
    """Return why the attempt must stop, or ``None`` while it is still stable.

    ``revision`` is the source's sequence number captured before summarizing. A manual attempt
    needs ``requested``; an automatic one needs both ``autoHandoff`` and the main's ``enabled``.
    """
    if facts.disposed:
        return "the session was disposed"
    if not facts.idle:
        return "the session is no longer idle"
    if facts.revision != revision:
        return f"the session changed (revision {revision} -> {facts.revision})"
    if facts.archived:
        return "the session was archived"
    if facts.blockers:
        return f"blocked by {', '.join(facts.blockers)}"
    if reason is Reason.MANUAL:
        return None if facts.requested else "the manual request was withdrawn"
    if not facts.auto_handoff:
        return "autoHandoff was turned off"
    if not facts.enabled:
        return "automatic handoff was disabled for this session"
    return None
