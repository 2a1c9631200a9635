"""docs/spec.md, Trigger: every rule at its boundaries, and the config table's ranges."""

from __future__ import annotations

import pytest

from handoff.core.phases import Reason
from handoff.core.trigger import Metrics, TriggerConfig, handoff_trigger, threshold

DEFAULT = TriggerConfig()


def metrics(tokens: int = 0, turns: int = 10, compactions: int = 0, capacity: int = 200_000):
    return Metrics(tokens=tokens, turns=turns, compactions=compactions, capacity=capacity)


def test_config_defaults_are_the_seeds():
    assert TriggerConfig(0.75, 120_000, 4, 3) == DEFAULT
    assert DEFAULT.errors() == {}


def test_below_min_turns_never_triggers_even_over_every_threshold():
    assert handoff_trigger(metrics(tokens=10**9, turns=3, compactions=99), DEFAULT) is None


def test_min_turns_boundary_triggers():
    assert handoff_trigger(metrics(tokens=150_000, turns=4), DEFAULT) is Reason.CONTEXT_PRESSURE


def test_repeated_compaction_at_the_threshold():
    assert handoff_trigger(metrics(compactions=3), DEFAULT) is Reason.REPEATED_COMPACTION
    assert handoff_trigger(metrics(compactions=2), DEFAULT) is None


def test_repeated_compaction_wins_over_context_pressure():
    got = handoff_trigger(metrics(tokens=10**6, compactions=3), DEFAULT)
    assert got is Reason.REPEATED_COMPACTION


def test_zero_compactions_setting_disables_the_compaction_criterion():
    config = TriggerConfig(handoff_compactions=0)
    assert handoff_trigger(metrics(compactions=50), config) is None


def test_ratio_wins_when_capacity_times_ratio_is_smaller():
    # 100k window × 0.75 = 75k < 120k ceiling
    assert threshold(metrics(capacity=100_000), DEFAULT) == 75_000
    assert handoff_trigger(metrics(tokens=74_999, capacity=100_000), DEFAULT) is None
    got = handoff_trigger(metrics(tokens=75_000, capacity=100_000), DEFAULT)
    assert got is Reason.CONTEXT_PRESSURE


def test_ceiling_wins_for_a_large_window():
    assert threshold(metrics(capacity=1_000_000), DEFAULT) == 120_000
    assert handoff_trigger(metrics(tokens=119_999, capacity=1_000_000), DEFAULT) is None
    got = handoff_trigger(metrics(tokens=120_000, capacity=1_000_000), DEFAULT)
    assert got is Reason.CONTEXT_PRESSURE


def test_unknown_capacity_uses_only_the_ceiling():
    assert threshold(metrics(capacity=0), DEFAULT) == 120_000
    assert handoff_trigger(metrics(tokens=119_999, capacity=0), DEFAULT) is None
    assert handoff_trigger(metrics(tokens=120_000, capacity=0), DEFAULT) is Reason.CONTEXT_PRESSURE


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [
        ("handoff_ratio", 0.2, 0.95),
        ("handoff_tokens", 8_000, 1_000_000),
        ("handoff_min_turns", 2, 100),
        ("handoff_compactions", 0, 100),
    ],
)
def test_range_bounds_are_inclusive(field, low, high):
    assert TriggerConfig(**{field: low}).errors() == {}
    assert TriggerConfig(**{field: high}).errors() == {}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("handoff_ratio", 0.19, "must be between 0.2 and 0.95"),
        ("handoff_ratio", 0.99, "must be between 0.2 and 0.95"),
        ("handoff_ratio", float("nan"), "must be between 0.2 and 0.95"),
        ("handoff_tokens", 7_999, "must be between 8000 and 1000000"),
        ("handoff_tokens", 1_000_001, "must be between 8000 and 1000000"),
        ("handoff_tokens", 9000.5, "must be a whole number"),
        ("handoff_min_turns", 1, "must be between 2 and 100"),
        ("handoff_min_turns", 101, "must be between 2 and 100"),
        ("handoff_compactions", -1, "must be between 0 and 100"),
        ("handoff_compactions", 101, "must be between 0 and 100"),
        ("handoff_compactions", True, "must be a number"),
        ("handoff_tokens", "120000", "must be a number"),
    ],
)
def test_out_of_range_values_are_named(field, value, message):
    assert TriggerConfig(**{field: value}).errors() == {field: message}
