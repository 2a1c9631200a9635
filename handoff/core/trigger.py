"""The trigger (docs/spec.md, Trigger): when an idle main should hand off, and the config ranges."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from handoff.core.phases import Reason

# docs/spec.md, Trigger, the settings table: field -> (minimum, maximum), inclusive.
RANGES: dict[str, tuple[float, float]] = {
    "handoff_ratio": (0.2, 0.95),
    "handoff_tokens": (8_000, 1_000_000),
    "handoff_min_turns": (2, 100),
    "handoff_compactions": (0, 100),
}


@dataclass(frozen=True)
class TriggerConfig:
    """The four thresholds with their defaults (ratio of the window; tokens; counts).

    docs/spec.md, Trigger, gives the defaults and ranges.
    """

    handoff_ratio: float = 0.75
    handoff_tokens: int = 120_000
    handoff_min_turns: int = 4
    handoff_compactions: int = 3

    def errors(self) -> dict[str, str]:
        """Return ``{field: message}`` for every value outside its range (empty if valid)."""
        found: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            low, high = RANGES[f.name]
            integral = f.name != "handoff_ratio"
            if isinstance(value, bool) or not isinstance(value, int | float):
                found[f.name] = "must be a number"
            elif integral and not float(value).is_integer():
                found[f.name] = "must be a whole number"
            elif not math.isfinite(value) or not low <= value <= high:
                found[f.name] = f"must be between {_fmt(low)} and {_fmt(high)}"
        return found


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


@dataclass(frozen=True)
class Metrics:
    """What the trigger looks at: tokens (context pressure), turns, compactions, capacity.

    ``capacity`` is the model's context window in tokens; 0 means unknown.
    """

    tokens: int
    turns: int
    compactions: int
    capacity: int


def threshold(metrics: Metrics, config: TriggerConfig) -> float:
    """Return the token threshold: the smaller of the ceiling and ``capacity × ratio``.

    With an unknown capacity (0) the ratio branch is infinite and only the ceiling applies.
    """
    by_ratio = metrics.capacity * config.handoff_ratio if metrics.capacity > 0 else math.inf
    return min(config.handoff_tokens, by_ratio)


def handoff_trigger(metrics: Metrics, config: TriggerConfig) -> Reason | None:
    """Return why an idle main should hand off now, or ``None`` (``handoffTrigger``, docs/spec.md,
    Trigger)."""
    if metrics.turns < config.handoff_min_turns:
        return None
    if config.handoff_compactions > 0 and metrics.compactions >= config.handoff_compactions:
        return Reason.REPEATED_COMPACTION
    if metrics.tokens >= threshold(metrics, config):
        return Reason.CONTEXT_PRESSURE
    return None
