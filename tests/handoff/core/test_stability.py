"""docs/spec.md, Stability: each way an attempt stops being stable."""

from __future__ import annotations

import pytest

from handoff.core.phases import Reason
from handoff.core.stability import StabilityFacts, instability

STABLE = dict(
    disposed=False,
    idle=True,
    revision=7,
    archived=False,
    blockers=(),
    auto_handoff=True,
    enabled=True,
    requested=False,
)


def check(reason: Reason, **change):
    return instability(StabilityFacts(**{**STABLE, **change}), revision=7, reason=reason)


def test_unchanged_automatic_attempt_is_stable():
    assert check(Reason.CONTEXT_PRESSURE) is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"disposed": True}, "disposed"),
        ({"idle": False}, "no longer idle"),
        ({"revision": 8}, "revision 7 -> 8"),
        ({"archived": True}, "archived"),
        ({"blockers": ("pending-inbox",)}, "pending-inbox"),
        ({"auto_handoff": False}, "autoHandoff was turned off"),
        ({"enabled": False}, "disabled for this session"),
    ],
)
def test_automatic_attempt_stops_when(change, words):
    assert words in check(Reason.REPEATED_COMPACTION, **change)


def test_manual_attempt_ignores_the_global_switch_but_needs_requested():
    assert check(Reason.MANUAL, auto_handoff=False, enabled=False, requested=True) is None
    assert "withdrawn" in check(Reason.MANUAL, requested=False)
