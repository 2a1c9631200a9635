"""host.periodic.Repeating: work repeated in a thread goes on through database outages."""

from __future__ import annotations

import threading

from django.db import OperationalError

from host.periodic import Repeating


def test_a_database_error_skips_one_call_and_the_next_ones_come():
    calls: list[int] = []
    third = threading.Event()

    def work() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        if len(calls) == 3:
            third.set()

    with Repeating(work, 0.01, "test-repeating"):
        assert third.wait(10), f"the work stopped after {len(calls)} call(s)"

    assert calls[:3] == [0, 1, 2]


def test_leaving_the_block_stops_the_calls():
    calls: list[int] = []
    first = threading.Event()

    def work() -> None:
        calls.append(1)
        first.set()

    with Repeating(work, 0.01, "test-repeating"):
        assert first.wait(10)
    stopped_at = len(calls)
    threading.Event().wait(0.1)  # ten intervals

    assert len(calls) == stopped_at
