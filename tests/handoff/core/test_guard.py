"""Step 1, guard: each refusal (docs/spec.md, The transaction, step 1) and the pass."""

from __future__ import annotations

import pytest

from handoff.core.guard import MESSAGES, GuardFacts, guard_refusal

OK = dict(registered_main=True, idle=True, archived=False, subagent=False, has_redirect=False)


def test_guard_passes_an_idle_registered_main():
    assert guard_refusal(GuardFacts(**OK)) is None


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"registered_main": False}, "not-a-registered-main"),
        ({"idle": False}, "not-idle"),
        ({"archived": True}, "archived"),
        ({"subagent": True}, "subagent"),
        ({"has_redirect": True}, "already-redirected"),
    ],
)
def test_each_refusal(change, refusal):
    assert guard_refusal(GuardFacts(**{**OK, **change})) == refusal
    assert MESSAGES[refusal]
