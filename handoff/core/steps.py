"""The transaction's steps in their order (docs/spec.md, The transaction)."""

from __future__ import annotations

from enum import StrEnum

from handoff.core.phases import Reason
from handoff.core.tokens import TokenLabel
from handoff.core.trigger import Metrics, TriggerConfig, handoff_trigger


class Step(StrEnum):
    """The eight steps; iteration order is the order they run in."""

    GUARD = "guard"
    METRICS = "metrics"
    REASON = "reason"
    BLOCKERS = "blockers"
    MARK_ATTEMPT = "mark_attempt"
    SUMMARIZE = "summarize"
    PREPARE = "prepare"
    COMMIT = "commit"


class CommitStep(StrEnum):
    """Step 8's parts in order: the brief is flushed before the route exists."""

    SEED = "seed"
    FLUSH = "flush"
    REDIRECT = "redirect"
    RECORD = "record"
    START = "start"


def decide_reason(
    *, requested: bool, metrics: Metrics, config: TriggerConfig, label: TokenLabel
) -> Reason | None:
    """Step 3: ``manual`` when requested, else the trigger; ``None`` means no attempt.

    An ``unavailable`` token label turns automatic handoff off (docs/spec.md, Token sources)
    but not ``now``.
    """
    if requested:
        return Reason.MANUAL
    if label is TokenLabel.UNAVAILABLE:
        return None
    return handoff_trigger(metrics, config)
