"""After-commit work held until a run of transactions ends (``common.after_commit``)."""

from __future__ import annotations

import logging

import pytest
from django.db import transaction

from common import after_commit

pytestmark = pytest.mark.django_db(transaction=True)


def _holding(name: str, ran: list[str]) -> None:
    def call() -> None:
        if not after_commit.hold(call):
            ran.append(name)

    transaction.on_commit(call)


def test_outside_a_hold_a_call_runs_at_its_commit():
    ran: list[str] = []
    with transaction.atomic():
        _holding("first", ran)
        assert ran == []
    assert ran == ["first"]


def test_held_calls_run_when_the_block_ends_in_commit_order():
    ran: list[str] = []
    with after_commit.held():
        with transaction.atomic():
            _holding("route", ran)
        with transaction.atomic():
            _holding("start", ran)
        assert ran == []
    assert ran == ["route", "start"]


def test_a_block_left_by_an_exception_still_runs_what_committed_and_not_what_rolled_back():
    ran: list[str] = []
    with pytest.raises(RuntimeError), after_commit.held():
        with transaction.atomic():
            _holding("route", ran)
        with transaction.atomic():
            _holding("start", ran)
            raise RuntimeError("start failed")
    assert ran == ["route"]


def test_a_held_call_that_raises_is_logged_and_the_others_still_run(caplog):
    ran: list[str] = []

    def broken() -> None:
        if not after_commit.hold(broken):
            raise ValueError("render failed")

    logged = caplog.at_level(logging.ERROR, logger="common.after_commit")
    with logged, after_commit.held(), transaction.atomic():
        transaction.on_commit(broken)
        _holding("next", ran)
    assert ran == ["next"]
    assert "render failed" in caplog.text
    assert caplog.records[0].exc_info is not None
