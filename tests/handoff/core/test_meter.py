"""The context meter agrees with the trigger (docs/spec.md, Trigger) and says when."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from handoff.core.tokens import TokensOut
from handoff.core.trigger import Metrics, TriggerConfig, handoff_trigger, threshold
from handoff.meter.rules import Verdict, meter

DEMO = TriggerConfig()  # ratio 0.75, ceiling 120 000, 4 turns, 3 compactions


def at(tokens: int, turns: int, compactions: int = 0, capacity: int = 32_000) -> Metrics:
    return Metrics(tokens=tokens, turns=turns, compactions=compactions, capacity=capacity)


def exact(value: int) -> TokensOut:
    return {"value": value, "basis": "context", "label": "exact"}


def unavailable() -> TokensOut:
    return {"value": 0, "basis": "context", "label": "unavailable"}


def test_trigger_point_is_the_window_share_when_smaller() -> None:
    out = meter(at(22_920, 6, 0), DEMO, exact(22_920))
    assert out["window"] == 32_000
    assert out["trigger_point"] == 24_000
    assert out["trigger_source"] == "window"
    assert out["tokens_to_go"] == 1_080
    assert round(out["share"], 3) == 0.955
    assert out["first"] == "context-pressure"
    assert not out["due"]
    assert out["verdict"] == Verdict.TOKENS_TO_GO


def test_trigger_point_is_the_ceiling_when_the_window_is_unknown() -> None:
    out = meter(Metrics(tokens=1_000, turns=5, compactions=0, capacity=0), DEMO, exact(1_000))
    assert out["trigger_point"] == 120_000
    assert out["trigger_source"] == "ceiling"


def test_rough_when_counts_turns_at_the_average_per_turn() -> None:
    out = meter(at(6_000, 6, 0), DEMO, exact(6_000))
    assert out["turns_estimate"] == 18  # 18 000 to go at 1 000 a turn
    assert out["verdict"] == Verdict.TOKENS_TO_GO


def test_turns_below_the_minimum_hold_it_back() -> None:
    out = meter(at(30_000, 2, 0), DEMO, exact(30_000))
    assert not out["due"]
    assert out["turns_to_go"] == 2
    assert out["verdict"] == Verdict.TURNS_TO_GO


def test_due_by_context_pressure() -> None:
    out = meter(at(25_080, 9, 0), DEMO, exact(25_080))
    assert out["due"] and out["first"] == "context-pressure"
    assert out["verdict"] == Verdict.DUE


def test_due_by_repeated_compaction_first() -> None:
    out = meter(at(9_000, 9, 3), DEMO, exact(9_000))
    assert out["due"] and out["first"] == "repeated-compaction"
    assert out["compactions_to_go"] == 0
    assert out["verdict"] == Verdict.DUE


def test_compaction_criterion_off() -> None:
    config = TriggerConfig(handoff_compactions=0)
    out = meter(at(9_000, 9, 7), config, exact(9_000))
    assert out["compactions_to_go"] is None and out["max_compactions"] == 0
    assert out["first"] == "context-pressure" and not out["due"]


def test_unavailable_says_automatic_handoff_is_off_and_why() -> None:
    out = meter(at(0, 9, 5), DEMO, unavailable())
    assert not out["automatic"] and not out["due"] and out["first"] is None
    assert out["verdict"] == Verdict.UNAVAILABLE


metrics_strategy = st.builds(
    Metrics,
    tokens=st.integers(0, 2_000_000),
    turns=st.integers(0, 200),
    compactions=st.integers(0, 200),
    capacity=st.integers(0, 2_000_000),
)
config_strategy = st.builds(
    TriggerConfig,
    handoff_ratio=st.floats(0.2, 0.95),
    handoff_tokens=st.integers(8_000, 1_000_000),
    handoff_min_turns=st.integers(2, 100),
    handoff_compactions=st.integers(0, 100),
)


@given(metrics_strategy, config_strategy)
def test_meter_never_disagrees_with_the_trigger(metrics: Metrics, config: TriggerConfig) -> None:
    out = meter(metrics, config, exact(metrics.tokens))
    reason = handoff_trigger(metrics, config)
    assert out["due"] == (reason is not None)
    if reason is not None:
        assert out["first"] == reason
    # The trigger point is the first whole token count the trigger fires at.
    assert (metrics.tokens >= threshold(metrics, config)) == (out["tokens_to_go"] == 0)
    fired_at_point = Metrics(out["trigger_point"], config.handoff_min_turns, 0, metrics.capacity)
    below_point = Metrics(out["trigger_point"] - 1, config.handoff_min_turns, 0, metrics.capacity)
    no_compactions = TriggerConfig(
        config.handoff_ratio, config.handoff_tokens, config.handoff_min_turns, 0
    )
    assert handoff_trigger(fired_at_point, no_compactions) is not None
    assert handoff_trigger(below_point, no_compactions) is None
