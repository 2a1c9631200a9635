"""The context meter: how near an idle main is to the trigger (docs/design.md, The context meter).

Built from the very ``Metrics`` and ``TriggerConfig`` the trigger (docs/spec.md, Trigger) reads, and
through ``trigger.threshold`` and ``trigger.handoff_trigger`` themselves, so the meter cannot say
"due" when the trigger says no, nor name another trigger point. Plain Python, no Django.

``meter(metrics, config, tokens, hold=None)`` returns a ``MeterOut``:

``{"tokens": {"value", "basis", "label"}, "window", "trigger_point", "trigger_source",
"share", "turns", "min_turns", "compactions", "max_compactions", "automatic", "due", "first",
"tokens_to_go", "turns_to_go", "compactions_to_go", "turns_estimate", "verdict"}``

All figures are tokens or counts. ``window`` is the capacity (0: unknown); ``trigger_point``
the token threshold rounded up to the first whole token that fires it; ``trigger_source``
``window`` when ``window × ratio`` is the smaller, else ``ceiling`` (``handoffTokens``);
``share`` the token figure over the trigger point (1.0 = the point is reached);
``max_compactions`` 0 means the compaction criterion is off; ``automatic`` is False when the
token label is ``unavailable`` (docs/spec.md, Token sources: automatic handoff is off, ``/handoff``
still works); ``due`` is the trigger's answer now, and False while a ``Hold`` keeps automatic
handoff from running (the conversation was handed off, its own switch is off, the global
``autoHandoff`` is off: the verdict says which instead of counting down); ``first`` the
criterion that fires first (``context-pressure``, ``repeated-compaction``; None when
automatic handoff is off);
``turns_estimate`` roughly how many more turns the context fills the rest in at this
conversation's average per turn (None when unknown); ``verdict`` which sentence says it
(a ``Verdict``): the words are written outside the core, in the reader's language, from
``verdict`` and these figures (``handoff.words.meter``).
"""

from __future__ import annotations

import math
from enum import StrEnum

from typing_extensions import TypedDict

from handoff.core.phases import Reason
from handoff.core.tokens import TokenLabel, TokensOut
from handoff.core.trigger import Metrics, TriggerConfig, handoff_trigger, threshold


class Hold(StrEnum):
    """Why automatic handoff will not run for a conversation, whatever its figures."""

    HANDED_OFF = "handed-off"
    SESSION_OFF = "session-off"
    GLOBAL_OFF = "global-off"


class Verdict(StrEnum):
    """Which sentence says when the conversation hands off (the words are the web's, in the
    reader's language: ``handoff.words.meter``). The holds first, then ``unavailable`` (no token
    figure), ``due``, ``turns-to-go`` (the point is reached or compactions fire first, turns are
    missing) and ``tokens-to-go`` (counting down to the trigger point)."""

    HANDED_OFF = Hold.HANDED_OFF.value
    SESSION_OFF = Hold.SESSION_OFF.value
    GLOBAL_OFF = Hold.GLOBAL_OFF.value
    UNAVAILABLE = "unavailable"
    DUE = "due"
    TURNS_TO_GO = "turns-to-go"
    TOKENS_TO_GO = "tokens-to-go"


class MeterOut(TypedDict):
    """The context meter as every surface shows it (see the module's docstring)."""

    tokens: TokensOut
    window: int
    trigger_point: int
    trigger_source: str
    share: float
    turns: int
    min_turns: int
    compactions: int
    max_compactions: int
    automatic: bool
    due: bool
    first: str | None
    tokens_to_go: int
    turns_to_go: int
    compactions_to_go: int | None
    turns_estimate: int | None
    verdict: str


def trigger_point(metrics: Metrics, config: TriggerConfig) -> int:
    """Return the first whole token count at which context pressure fires (``threshold``)."""
    return math.ceil(threshold(metrics, config))


def _first(metrics: Metrics, config: TriggerConfig) -> Reason:
    """The criterion that fires first: compactions once their count is reached (the trigger
    checks them first), else the tokens, which grow every turn while compactions come only
    near the window."""
    limit = config.handoff_compactions
    if limit > 0 and metrics.compactions >= limit:
        return Reason.REPEATED_COMPACTION
    return Reason.CONTEXT_PRESSURE


def _turns_estimate(metrics: Metrics, tokens_to_go: int) -> int | None:
    """Roughly how many turns until ``tokens_to_go`` is filled at the average per turn."""
    if metrics.turns <= 0 or metrics.tokens <= 0 or tokens_to_go <= 0:
        return None
    return math.ceil(tokens_to_go / (metrics.tokens / metrics.turns))


def _verdict(out: MeterOut, hold: Hold | None) -> Verdict:
    """Which sentence applies: a handoff made first, then a missing token figure, then the
    switches, then how far the trigger is."""
    if hold is not Hold.HANDED_OFF and out["tokens"]["label"] == TokenLabel.UNAVAILABLE:
        return Verdict.UNAVAILABLE
    if hold is not None:
        return Verdict(hold.value)
    if out["due"]:
        return Verdict.DUE
    if out["first"] == Reason.REPEATED_COMPACTION or out["tokens_to_go"] == 0:
        return Verdict.TURNS_TO_GO
    return Verdict.TOKENS_TO_GO


def meter(
    metrics: Metrics, config: TriggerConfig, tokens: TokensOut, hold: Hold | None = None
) -> MeterOut:
    """Return the context meter of ``metrics`` under ``config`` (see the module's docstring).

    ``tokens`` is the figure ``metrics.tokens`` was read as (its basis and label); ``hold``
    why automatic handoff will not run now (None: it runs when the trigger fires).
    """
    automatic = tokens["label"] != TokenLabel.UNAVAILABLE
    point = trigger_point(metrics, config)
    limit = config.handoff_compactions
    tokens_to_go = max(0, point - metrics.tokens)
    by_window = threshold(metrics, config) < config.handoff_tokens
    out = MeterOut(
        tokens=tokens,
        window=metrics.capacity,
        trigger_point=point,
        trigger_source="window" if by_window else "ceiling",
        share=metrics.tokens / point if point > 0 else 0.0,
        turns=metrics.turns,
        min_turns=config.handoff_min_turns,
        compactions=metrics.compactions,
        max_compactions=limit,
        automatic=automatic,
        due=automatic and hold is None and handoff_trigger(metrics, config) is not None,
        first=str(_first(metrics, config)) if automatic else None,
        tokens_to_go=tokens_to_go,
        turns_to_go=max(0, config.handoff_min_turns - metrics.turns),
        compactions_to_go=max(0, limit - metrics.compactions) if limit > 0 else None,
        turns_estimate=_turns_estimate(metrics, tokens_to_go),
        verdict="",
    )
    out["verdict"] = str(_verdict(out, hold))
    return out
