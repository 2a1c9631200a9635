"""``handoff.backoff.rules.delay``: doubling from the base up to the cap."""

from __future__ import annotations

import pytest

from handoff.backoff.rules import delay


def test_delay_doubles_from_the_base_up_to_the_cap():
    waits = [delay(n, base=60, cap=600) for n in range(7)]
    assert waits == [0, 60, 120, 240, 480, 600, 600]


def test_delay_stays_at_the_cap_for_a_long_run_of_failures():
    assert delay(10_000, base=60, cap=3600) == 3600


def test_delay_refuses_a_negative_count():
    with pytest.raises(ValueError, match="0 or more"):
        delay(-1, base=60, cap=600)
