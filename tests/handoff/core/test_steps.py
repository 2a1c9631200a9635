"""docs/spec.md, The transaction: the steps' order and step 3 (reason)."""

from __future__ import annotations

from handoff.core.phases import Phase, Reason, can_move
from handoff.core.steps import CommitStep, Step, decide_reason
from handoff.core.tokens import TokenLabel
from handoff.core.trigger import Metrics, TriggerConfig

HOT = Metrics(tokens=500_000, turns=10, compactions=0, capacity=200_000)
COLD = Metrics(tokens=10, turns=10, compactions=0, capacity=200_000)


def test_eight_steps_in_the_seeds_order():
    assert [s.value for s in Step] == [
        "guard",
        "metrics",
        "reason",
        "blockers",
        "mark_attempt",
        "summarize",
        "prepare",
        "commit",
    ]


def test_commit_flushes_the_brief_before_the_route():
    order = [c.value for c in CommitStep]
    assert order == ["seed", "flush", "redirect", "record", "start"]


def test_requested_is_manual_whatever_the_metrics():
    got = decide_reason(
        requested=True, metrics=COLD, config=TriggerConfig(), label=TokenLabel.UNAVAILABLE
    )
    assert got is Reason.MANUAL


def test_trigger_decides_automatic_attempts():
    config = TriggerConfig()
    assert decide_reason(requested=False, metrics=HOT, config=config, label=TokenLabel.EXACT) == (
        Reason.CONTEXT_PRESSURE
    )
    assert decide_reason(requested=False, metrics=COLD, config=config, label=TokenLabel.EXACT) is (
        None
    )


def test_unavailable_label_turns_automatic_handoff_off():
    got = decide_reason(
        requested=False, metrics=HOT, config=TriggerConfig(), label=TokenLabel.UNAVAILABLE
    )
    assert got is None


def test_estimated_label_still_takes_part():
    got = decide_reason(
        requested=False, metrics=HOT, config=TriggerConfig(), label=TokenLabel.ESTIMATED
    )
    assert got is Reason.CONTEXT_PRESSURE


def test_records_never_move_backwards():
    assert can_move(Phase.SUMMARIZING, Phase.PREPARED)
    assert can_move(Phase.PREPARED, Phase.COMMITTED)
    assert can_move(Phase.COMMITTED, Phase.STARTED)
    assert can_move(Phase.COMMITTED, Phase.COMMITTED_START_PENDING)
    assert can_move(Phase.COMMITTED_START_PENDING, Phase.STARTED)
    assert not can_move(Phase.PREPARED, Phase.SUMMARIZING)
    assert not can_move(Phase.STARTED, Phase.COMMITTED_START_PENDING)
    assert not can_move(Phase.FAILED, Phase.SUMMARIZING)


def test_failed_only_before_the_route_is_committed():
    assert can_move(Phase.SUMMARIZING, Phase.FAILED)
    assert can_move(Phase.PREPARED, Phase.FAILED)
    assert not can_move(Phase.COMMITTED, Phase.FAILED)
    assert not can_move(Phase.COMMITTED_START_PENDING, Phase.FAILED)
