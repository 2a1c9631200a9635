"""The demo a newcomer gets from ``make run``: long enough to hand off, by hand or by itself."""

from __future__ import annotations

from io import StringIO
from unittest import mock

import pytest
from django.core.management import call_command
from django.db.models.signals import post_delete

from handoff import operations
from handoff.models import HandoffRecord, HandoffSettings
from handoff_settings.forms import HandoffSettingsForm
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


def test_switching_the_global_switch_on_last_hands_the_demo_off_at_once(client, immediate_tasks):
    """docs/guide.md's order: the conversation's own switch first, then Settings (issue 10)."""
    source = the_demo()
    operations.enable(source.pk)
    assert not HandoffRecord.objects.filter(source=source).exists()
    client.force_login(demo_user())

    client.post(
        "/settings/field/auto_handoff/", {"auto_handoff": "on"}, headers={"HX-Request": "true"}
    )

    record = HandoffRecord.objects.get(source=source)
    assert (record.reason, record.phase) == ("context-pressure", "started")


def test_reset_starts_the_demo_afresh(immediate_tasks):
    source = the_demo()
    operations.run_attempt(source.pk, manual=True)
    assert Session.objects.count() == 3

    out = StringIO()
    call_command("seed_demo", "--reset", stdout=out)

    assert "Reset the demo: 3 sessions of demo deleted." in out.getvalue()
    assert Session.objects.count() == 2 and not HandoffRecord.objects.exists()
    fresh = Session.objects.get(external_id="demo-weather-cli")
    assert fresh.pk != source.pk and "接续" not in fresh.title


def test_seed_demo_prints_the_port_it_was_given_and_never_a_guessed_one(monkeypatch):
    monkeypatch.setenv("PORT", "8312")
    out = StringIO()
    call_command("seed_demo", "--reset", stdout=out)
    assert "Open http://127.0.0.1:8312/." in out.getvalue()

    monkeypatch.delenv("PORT")
    out = StringIO()
    call_command("seed_demo", "--reset", stdout=out)
    assert "Open http://127.0.0.1:8000/." not in out.getvalue()
    assert "make run PORT=" in out.getvalue()
    assert f"Sign in as demo / {DEMO_PASSWORD}." in out.getvalue()


def test_seed_demo_speaks_the_deployments_language(settings, monkeypatch):
    settings.LANGUAGE_CODE = "zh-hans"
    monkeypatch.setenv("PORT", "8312")
    call_command("seed_demo", stdout=StringIO())
    out = StringIO()
    call_command("seed_demo", "--reset", stdout=out)
    assert "已重置演示：删除了 demo 的 2 个会话。" in out.getvalue()
    assert "已创建演示会话" in out.getvalue() and "Seeded" not in out.getvalue()
    assert f"打开 http://127.0.0.1:8312/。 以 demo / {DEMO_PASSWORD} 登录。" in out.getvalue()


def test_reset_leaves_other_users_alone(django_user_model):
    other = django_user_model.objects.create_user("ada", password="pw")
    seed_demo()
    call_command("seed_demo", "--reset", stdout=StringIO())
    assert django_user_model.objects.filter(pk=other.pk).exists()
    assert demo_user().check_password(DEMO_PASSWORD)


def test_a_crash_after_the_switch_is_saved_leaves_it_on_for_the_next_idle(immediate_tasks):
    source = the_demo()
    operations.enable(source.pk)
    form = HandoffSettingsForm({"auto_handoff": "on"}, only="auto_handoff")
    assert form.is_valid()

    # The evaluation runs as a task after the save: its crash is the task's, not the request's.
    with mock.patch.object(
        operations, "evaluate_enabled_mains", side_effect=RuntimeError("crash")
    ) as evaluation:
        form.save()
    assert evaluation.called

    assert HandoffSettings.objects.get(pk=1).auto_handoff is True
    assert not HandoffRecord.objects.filter(source=source).exists()
    operations.evaluate(source.pk)  # the next idle
    assert HandoffRecord.objects.get(source=source).reason == "context-pressure"


def test_a_crash_half_way_through_a_reset_leaves_the_demo_as_it_was():
    source = the_demo()

    def crash(**kwargs):
        raise RuntimeError("crash")

    post_delete.connect(crash, sender=Session, weak=False)
    try:
        with pytest.raises(RuntimeError):
            call_command("seed_demo", "--reset", stdout=StringIO())
    finally:
        post_delete.disconnect(crash, sender=Session)

    assert Session.objects.filter(pk=source.pk).exists() and Session.objects.count() == 2
    assert source.messages.count() > 0


def test_a_second_hop_does_not_take_the_successor_s_acknowledgement_as_the_work_s_state(
    immediate_tasks,
):
    first = operations.run_attempt(seed_demo()[0].pk, manual=True).record
    assert first is not None and first.target_id is not None
    acknowledged = Session.objects.get(pk=first.target_id).messages.filter(role="assistant")
    assert acknowledged.filter(content__startswith="Offline agent: received the handoff brief")

    second = operations.run_attempt(first.target_id, manual=True).record
    assert second is not None and second.brief is not None
    steps = " ".join(second.brief["next_steps"])
    assert "received the handoff brief" not in steps
    assert "finish the README examples" in steps  # the work's own next step, carried on
