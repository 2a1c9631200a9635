"""Hook deliveries are kept ``AGENT_HOOKS_DELIVERY_RETENTION`` seconds, then pruned
(``agent_hooks.deliveries.prune``): old ones go, recent ones stay, the choices and relays that
named them stay, and a retry of a pruned delivery does nothing twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from hook_scenarios import PROMPT, SUCCESSOR, clear, prepared

from agent_hooks import deliveries
from agent_hooks.models import Choice, Delivery, Relay
from handoff.core.phases import Phase
from host.models import Message

pytestmark = pytest.mark.django_db

FORWARDED = "Also update the README."


def age(days: int) -> None:
    """Make every stored delivery ``days`` days old."""
    Delivery.objects.update(created=timezone.now() - timedelta(days=days))


def test_deliveries_past_retention_go_and_the_rows_naming_them_stay(claude):
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    successor_log, _ = clear(claude, log)
    claim = Choice.objects.get(record=record).claim_id
    assert claim is not None
    forwarded = claude.post("user_prompt_submit", log, prompt=FORWARDED)
    forward_delivery = claude.sent[-1]
    carried = claude.hook("user_prompt_submit", successor_log, prompt="Go on.")
    assert FORWARDED in carried["hookSpecificOutput"]["additionalContext"]
    relay = Relay.objects.get()
    age(days=8)
    claude.hook("stop", successor_log)
    recent = claude.sent[-1]

    assert deliveries.prune() > 0

    assert Delivery.objects.filter(pk=recent).exists()  # recent: kept
    assert not Delivery.objects.filter(pk=claim).exists()  # old: gone
    assert not Delivery.objects.filter(pk=forward_delivery).exists()
    choice = Choice.objects.get(record=record)  # the choice stays, without its claim
    assert choice.claim_id is None
    assert choice.successor_key == SUCCESSOR
    # The relay stays delivered (its delivery is kept): it is not relayed again.
    assert Relay.objects.get().delivered_id == relay.delivered_id
    assert claude.hook("user_prompt_submit", successor_log, prompt="And then?") is None
    # A retry of a pruned delivery runs as a new one and relays nothing twice.
    assert claude.post("user_prompt_submit", log, delivery=forward_delivery, prompt=FORWARDED) == (
        forwarded
    )
    assert Relay.objects.count() == 1
    assert Message.objects.filter(session=session, content=FORWARDED).count() == 1
    assert claude.hook("user_prompt_submit", successor_log, prompt="Still there?") is None


def test_the_claim_of_a_brief_still_waiting_is_kept(claude):
    log, _, record = prepared(claude)
    successor_log, _ = clear(claude, log, late=True)
    claim = Choice.objects.get(record=record).claim_id
    assert claim is not None
    age(days=8)
    deliveries.prune()
    assert Delivery.objects.filter(pk=claim).exists()
    # The successor's next event still finds the claim unacknowledged: no route.
    claude.hook("user_prompt_submit", successor_log, prompt="Hello again.")
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert record.error.startswith("seed flush failed")


def test_the_retention_is_a_setting_and_answers_prune_as_they_go(
    claude, settings, monkeypatch, django_capture_on_commit_callbacks
):
    log, _, _ = prepared(claude)
    old = claude.sent[-1]
    Delivery.objects.filter(pk=old).update(created=timezone.now() - timedelta(hours=2))
    settings.AGENT_HOOKS_DELIVERY_RETENTION = 3600
    monkeypatch.setattr(deliveries, "PRUNE_EVERY", 1)
    with django_capture_on_commit_callbacks(execute=True):
        claude.hook("stop", log)
    assert not Delivery.objects.filter(pk=old).exists()
    assert Delivery.objects.filter(pk=claude.sent[-1]).exists()
