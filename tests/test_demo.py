"""The demo a newcomer gets from ``make run``: long enough to hand off, by hand or by itself."""

from __future__ import annotations

import pytest

from handoff import operations
from handoff.models import HandoffRecord
from handoff_settings.models import HandoffSettings
from host.demo import DEMO_PASSWORD, demo_user, seed_demo
from host.models import Session

pytestmark = pytest.mark.django_db(transaction=True)


def the_demo() -> Session:
    seed_demo()
    return Session.objects.get(external_id="demo-weather-cli")


def test_seeding_twice_adds_nothing():
    assert len(seed_demo()) == 2
    assert seed_demo() == []
    assert Session.objects.count() == 2


def test_the_demo_user_can_sign_in(client):
    user = demo_user()
    assert client.login(username=user.username, password=DEMO_PASSWORD)


def test_hand_off_now_ends_started_with_the_brief_first(immediate_tasks):
    source = the_demo()
    outcome = operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get(source=source)
    assert outcome.ok and record.phase == "started"
    assert record.target is not None and record.brief is not None
    first = record.target.messages.order_by("seq").first()
    assert first is not None
    assert first.source_kind == "plugin" and first.content.startswith("# Handoff brief")
    paths = [item.split(" — ")[0] for item in record.brief["artifacts"]]  # "path — what"
    assert "/home/demo/projects/weather-cli/weather/client.py" in paths


def test_switching_automatic_handoff_on_hands_the_demo_off_by_itself(immediate_tasks):
    source = the_demo()
    HandoffSettings.objects.update_or_create(pk=1, defaults={"auto_handoff": True})
    operations.enable(source.pk)
    record = HandoffRecord.objects.get(source=source)
    assert (record.reason, record.phase) == ("context-pressure", "started")
