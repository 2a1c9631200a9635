"""Record phases (docs/spec.md, State; Recovery) and reasons (docs/spec.md, Trigger)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """A record's phase. ``FAILED`` and ``STARTED`` are final."""

    SUMMARIZING = "summarizing"
    PREPARED = "prepared"
    COMMITTED = "committed"
    COMMITTED_START_PENDING = "committed-start-pending"
    STARTED = "started"
    FAILED = "failed"


class Reason(StrEnum):
    """Why an attempt ran (docs/spec.md, Trigger)."""

    MANUAL = "manual"
    CONTEXT_PRESSURE = "context-pressure"
    REPEATED_COMPACTION = "repeated-compaction"


_ORDER = {
    Phase.SUMMARIZING: 0,
    Phase.PREPARED: 1,
    Phase.COMMITTED: 2,
    Phase.COMMITTED_START_PENDING: 3,
    Phase.STARTED: 4,
}
# A record in a final phase never moves again.
FINAL_PHASES = frozenset({Phase.STARTED, Phase.FAILED})
# The attempt still holds its source (before the route): a second attempt on it is refused.
IN_PROGRESS_PHASES = frozenset({Phase.SUMMARIZING, Phase.PREPARED})
# The attempt has not reached an outcome yet: it moves on by itself, or recovery moves it
# (docs/spec.md, Recovery); pages showing it keep polling.
UNFINISHED_PHASES = frozenset({*IN_PROGRESS_PHASES, Phase.COMMITTED})
# The attempt opened a successor (its route was installed), whatever happened to it since.
COMMITTED_PHASES = frozenset({Phase.COMMITTED, Phase.COMMITTED_START_PENDING, Phase.STARTED})


def can_move(current: Phase, new: Phase) -> bool:
    """Return whether a record may go from ``current`` to ``new`` (it never moves backwards).

    ``failed`` is reachable only before the route is committed; once committed a record ends in
    ``started`` or ``committed-start-pending`` (docs/spec.md, Failure outcomes: a committed
    successor is kept).
    """
    if current in FINAL_PHASES:
        return False
    if new == Phase.FAILED:
        return _ORDER[current] < _ORDER[Phase.COMMITTED]
    return _ORDER[new] > _ORDER[current]


# The error a record ``failed`` by the user's discard at review starts with (handoff.review).
DISCARDED_AT_REVIEW = "discarded at review"
# The error a record ``failed`` because the user chose to stay in the source starts with.
DECLINED = "declined"


def discarded_note(phase: str, error: str | None) -> str:
    """Return how people read a record the user discarded at review, "" for any other record.

    The record stays ``failed`` (docs/spec.md, State); its error (``discarded at review: draft
    <id> archived``) is for operators, this sentence (no ids) for the page and the CLI.
    """
    if phase != Phase.FAILED or not (error or "").startswith(DISCARDED_AT_REVIEW):
        return ""
    if (error or "").endswith("archived"):
        return "Discarded at review: its draft conversation was archived."
    return "Discarded at review."
