"""Settings → Conversation Collaboration (handoff_settings) and the conversation panel and /handoff
command (handoff.web)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django_tasks_db.models import DBTaskResult
from handoff_support import make_source, talked

from follower.events import deliver
from follower.models import FollowerEvent
from handoff import operations, services, tasks
from handoff.models import HandoffRecord, HandoffSettings, MainState
from handoff.web.panel import describe_blocker, progress
from host.sessions import create_session

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]

HTMX = {"HX-Request": "true"}


def save(client: Client, name: str, value: Any) -> Any:
    data = {} if value is None else {name: value}
    return client.post(reverse("handoff_settings:field", args=[name]), data, headers=HTMX)


def stored() -> HandoffSettings:
    return HandoffSettings.objects.get_or_create(pk=1)[0]


# --- the card -------------------------------------------------------------------------------


def test_card_shows_every_setting_with_the_stored_value(as_staff: Client):
    HandoffSettings.objects.update_or_create(pk=1, defaults={"handoff_ratio": 0.6})
    html = as_staff.get(reverse("handoff_settings:card")).content.decode()
    for name in (
        "auto_handoff",
        "handoff_ratio",
        "handoff_tokens",
        "handoff_min_turns",
        "handoff_compactions",
        "token_basis",
    ):
        assert f'id="setting-{name}"' in html
    assert 'name="handoff_ratio" id="id_handoff_ratio" value="0.6"' in html
    assert 'hx-trigger="change"' in html


def test_card_is_read_only_for_non_staff(as_member: Client):
    html = as_member.get(reverse("handoff_settings:card")).content.decode()
    assert "read-only" in html
    # The global settings only: the folders a user follows are their own to switch.
    assert 'hx-post="/settings/field/' not in html
    assert "disabled" in html


def test_non_staff_cannot_save(as_member: Client):
    before = stored().version
    assert save(as_member, "handoff_ratio", "0.5").status_code == 403
    assert stored().version == before and stored().handoff_ratio == 0.75


def test_status_channel_starts_connecting(as_staff: Client):
    html = as_staff.get(reverse("handoff_settings:card")).content.decode()
    assert 'id="status-channel"' in html
    assert "connecting…" in html


def test_status_channel_left_out_says_unavailable(as_staff: Client, settings: Any):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, services.STATUS_CHANNEL: None}
    html = as_staff.get(reverse("handoff_settings:card")).content.decode()
    assert "status channel unavailable" in html
    assert 'data-service="missing"' in html
    assert save(as_staff, "handoff_ratio", "0.5").status_code == 200
    assert stored().handoff_ratio == 0.5


# --- saving ---------------------------------------------------------------------------------


def test_save_ratio_stores_it_and_shows_the_stored_value(as_staff: Client):
    response = save(as_staff, "handoff_ratio", "0.5")
    html = response.content.decode()
    assert response.status_code == 200
    assert stored().handoff_ratio == 0.5
    assert 'value="0.5"' in html and "Saved" in html
    card = as_staff.get(reverse("handoff_settings:card")).content.decode()
    assert card.count('id="id_handoff_ratio" value="0.5"') == 1


def test_out_of_range_shows_an_inline_error_and_saves_nothing(as_staff: Client):
    before = stored().version
    response = save(as_staff, "handoff_ratio", "0.99")
    html = response.content.decode()
    assert response.status_code == 422
    assert 'class="field-error" id="error-handoff_ratio"' in html
    assert "0.95" in html and "Nothing was saved; the stored value is 0.75" in html
    assert stored().handoff_ratio == 0.75 and stored().version == before


def test_in_chinese_the_error_and_nothing_saved_read_as_one_text(as_staff: Client):
    response = as_staff.post(
        reverse("handoff_settings:field", args=["handoff_ratio"]),
        {"handoff_ratio": "0.99"},
        headers=HTMX | {"Accept-Language": "zh-hans"},
    )
    html = response.content.decode()
    assert "之间的值。未保存任何内容；已保存的值是 0.75。" in html


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("handoff_ratio", "0.1"),
        ("handoff_tokens", "7999"),
        ("handoff_tokens", "1000001"),
        ("handoff_min_turns", "1"),
        ("handoff_min_turns", "101"),
        ("handoff_compactions", "-1"),
        ("handoff_compactions", "101"),
        ("handoff_tokens", "lots"),
        ("token_basis", "vibes"),
    ],
)
def test_every_range_is_enforced(as_staff: Client, name: str, value: str):
    before = stored().version
    assert save(as_staff, name, value).status_code == 422
    assert stored().version == before


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("handoff_ratio", "0.2", 0.2),
        ("handoff_ratio", "0.95", 0.95),
        ("handoff_tokens", "8000", 8000),
        ("handoff_tokens", "1000000", 1_000_000),
        ("handoff_min_turns", "2", 2),
        ("handoff_compactions", "0", 0),
        ("token_basis", "cumulative", "cumulative"),
    ],
)
def test_range_ends_are_accepted(as_staff: Client, name: str, value: str, expected: Any):
    assert save(as_staff, name, value).status_code == 200
    assert getattr(stored(), name) == expected


def test_double_submit_makes_one_change(as_staff: Client):
    before = stored().version
    first = save(as_staff, "handoff_tokens", "90000")
    second = save(as_staff, "handoff_tokens", "90000")
    assert stored().handoff_tokens == 90000
    assert stored().version == before + 1
    assert "Saved" in first.content.decode()
    assert "Already saved" in second.content.decode()


def test_a_change_refreshes_the_activity_card_and_a_repeat_does_not(as_staff: Client):
    first = save(as_staff, "auto_handoff", "on")
    second = save(as_staff, "auto_handoff", "on")
    assert first.headers["HX-Trigger"] == '{"settings:saved": {}}'
    assert "HX-Trigger" not in second.headers
    card = as_staff.get("/settings/").content.decode()
    assert "settings:saved from:body" in card  # the activity card listens for it


def test_auto_handoff_switch_on_and_off(as_staff: Client):
    save(as_staff, "auto_handoff", "on")
    assert stored().auto_handoff is True
    save(as_staff, "auto_handoff", None)  # an unchecked box sends nothing
    assert stored().auto_handoff is False


def test_review_switch_on_and_off(as_staff: Client):
    assert (
        "Review before the successor starts"
        in as_staff.get(reverse("handoff_settings:card")).content.decode()
    )
    save(as_staff, "review_handoffs", "on")
    assert stored().review_handoffs is True
    save(as_staff, "review_handoffs", None)
    assert stored().review_handoffs is False


def test_switching_auto_handoff_on_hands_off_a_due_main_in_the_background(
    as_staff: Client, settings: Any
):
    """The switch is read live (docs/spec.md, Switches), so an idle main that is due hands off
    without waiting for its next turn; the request only queues that evaluation (one task,
    whatever the number of mains), and the task worker runs it."""
    source = make_source()
    operations.enable(source.pk)
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert save(as_staff, "auto_handoff", "on").status_code == 200
    assert not HandoffRecord.objects.filter(source=source).exists()
    (queued,) = DBTaskResult.objects.all()
    assert queued.task_path == "handoff.tasks.evaluation_task"

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.HOST_TASKS_RUN_IN_CALLER = True
    assert tasks.evaluation_task.call() == 1  # what the worker runs
    record = HandoffRecord.objects.get(source=source)
    assert (record.reason, record.phase) == ("context-pressure", "started")


@pytest.mark.parametrize("value", ["maybe", "", "yes please"])
def test_auto_handoff_refuses_a_value_that_is_not_on_or_off(as_staff: Client, value: str):
    before = stored().version
    response = save(as_staff, "auto_handoff", value)
    html = response.content.decode()
    assert response.status_code == 422
    assert 'id="error-auto_handoff"' in html
    assert "Automatic handoff is a switch: send on or off" in html
    assert stored().auto_handoff is False and stored().version == before


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("false", False)])
def test_auto_handoff_takes_the_words_of_a_boolean(as_staff: Client, value: str, expected: bool):
    save(as_staff, "auto_handoff", value)
    assert stored().auto_handoff is expected


def test_unknown_setting_is_404(as_staff: Client):
    assert save(as_staff, "version", "99").status_code == 404


def test_saving_works_with_the_settings_store_left_out(as_staff: Client, settings: Any):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, services.SETTINGS_STORE: None}
    try:
        assert save(as_staff, "handoff_min_turns", "7").status_code == 200
        assert services.load_settings().handoff_min_turns == 7
        assert stored().handoff_min_turns == 4
    finally:
        services.settings_store().__class__.reset()  # type: ignore[attr-defined]


# --- activity ---------------------------------------------------------------------------------


def test_card_shows_the_last_record_and_deferred_blockers(as_staff: Client, staff: Any):
    source = talked(staff, "Long task")
    HandoffRecord.objects.create(
        source=source, phase="failed", reason="manual", source_revision=3, error="LLM timed out"
    )
    MainState.objects.create(session=source, enabled=True, deferred=["pending-inbox"])

    html = as_staff.get(reverse("handoff_settings:card")).content.decode()

    assert "Latest attempt on" in html and "Long task" in html
    assert "LLM timed out" in html
    assert "messages are queued for its next turn" in html


def test_the_latest_attempt_is_one_sentence_and_its_figures_read_cleanly(
    as_staff: Client, staff: Any
):
    source = talked(staff, "Long task")
    HandoffRecord.objects.create(
        source=source,
        phase="failed",
        reason="manual",
        source_revision=3,
        metrics={"tokens": 900, "turns": 2, "compactions": 0, "capacity": 32_000},
    )

    text = " ".join(as_staff.get(reverse("handoff_settings:card")).content.decode().split())

    assert re.search(
        r"Latest attempt on <span[^>]*><a [^>]*>Long task</a></span>, [^<]* ago\.", text
    )
    assert "0 compactions · context window 32,000" in text
    assert " ," not in text


def test_card_shows_only_the_users_own_records(as_member: Client, staff: Any):
    theirs = talked(staff, "Staff secret")
    HandoffRecord.objects.create(source=theirs, phase="failed", reason="manual", source_revision=1)
    html = as_member.get(reverse("handoff_settings:card")).content.decode()
    assert "Staff secret" not in html
    assert "No handoff yet" in html


# --- the conversation page's panel ----------------------------------------------------------


def test_panel_switch_enables_and_disables(as_staff: Client, staff: Any):
    session = talked(staff, "Work")
    url = reverse("handoff_web:session_action", args=[session.pk, "enable"])
    html = as_staff.post(url, headers=HTMX).content.decode()
    assert MainState.objects.get(session=session).enabled
    assert "checked" in html
    as_staff.post(reverse("handoff_web:session_action", args=[session.pk, "disable"]))
    assert not MainState.objects.get(session=session).enabled


def test_panel_hand_off_now_requests_and_polls(as_staff: Client, staff: Any, settings: Any):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    session = talked(staff, "Work")
    url = reverse("handoff_web:session_action", args=[session.pk, "now"])
    html = as_staff.post(url, headers=HTMX).content.decode()
    assert MainState.objects.get(session=session).requested
    assert 'hx-trigger="every 1s"' in html
    assert "Handoff requested" in html


def test_panel_of_another_users_session_is_404(as_member: Client, staff: Any):
    session = talked(staff, "Work")
    assert as_member.get(reverse("handoff_web:panel", args=[session.pk])).status_code == 404
    url = reverse("handoff_web:session_action", args=[session.pk, "enable"])
    assert as_member.post(url).status_code == 404
    assert not MainState.objects.filter(session=session).exists()


def test_panel_on_a_subagent_says_handoff_is_not_available(as_staff: Client, staff: Any):
    main = talked(staff, "Main")
    sub = create_session(staff, title="Helper", parent=main)
    html = as_staff.get(reverse("handoff_web:panel", args=[sub.pk])).content.decode()
    assert "Handoff is not available for this conversation" in html
    url = reverse("handoff_web:session_action", args=[sub.pk, "now"])
    assert as_staff.post(url).status_code == 409


def test_panel_shows_deferred_blockers_in_words(as_staff: Client, staff: Any):
    session = talked(staff, "Work")
    MainState.objects.create(session=session, enabled=True, deferred=["activity:turn"])
    html = as_staff.get(reverse("handoff_web:panel", args=[session.pk])).content.decode()
    assert "Deferred" in html and "something is in flight (turn)" in html


def test_progress_of_an_unfinished_attempt_marks_the_current_phase():
    steps = progress({"phase": "prepared"})
    assert [(s.phase, s.state) for s in steps] == [
        ("summarizing", "done"),
        ("prepared", "current"),
        ("committed", "todo"),
        ("started", "todo"),
    ]


def test_progress_of_a_started_attempt_is_all_done():
    assert {s.state for s in progress({"phase": "started"})} == {"done"}


def test_progress_of_committed_start_pending_says_open_the_successor():
    steps = progress({"phase": "committed-start-pending"})
    assert steps[-1].state == "failed" and "open the successor" in str(steps[-1].label)


def test_progress_of_a_failed_attempt():
    assert [(s.phase, s.state) for s in progress({"phase": "failed"})] == [("failed", "failed")]


def test_blocker_phrases():
    assert describe_blocker("owned-agent:0123456789") == "its subagent 01234567 is still live"
    assert "custom" in describe_blocker("custom-permissions-require-manual-transfer")
    assert describe_blocker("something-new") == "something-new"


def test_panel_fetched_again_unchanged_answers_304(as_staff: Client, staff: Any):
    session = talked(staff, "Work")
    url = reverse("handoff_web:panel", args=[session.pk])
    first = as_staff.get(url, headers=HTMX)
    again = as_staff.get(url, headers={**HTMX, "If-None-Match": first["ETag"]})
    assert "no-cache" in first["Cache-Control"]
    assert again.status_code == 304


def test_panel_asks_for_a_sidebar_refresh_when_the_phase_moved(as_staff: Client, staff: Any):
    session = talked(staff, "Work")
    HandoffRecord.objects.create(
        source=session, phase="prepared", reason="manual", source_revision=1
    )
    url = reverse("handoff_web:panel", args=[session.pk])
    moved = as_staff.get(url, {"phase": "summarizing"}, headers=HTMX)
    same = as_staff.get(url, {"phase": "prepared"}, headers=HTMX)
    assert "sidebar:refresh" in moved["HX-Trigger"]
    assert "HX-Trigger" not in same
    assert 'hx-trigger="every 1s"' in same.content.decode()


def test_the_latest_attempt_counts_one_turn_in_the_singular(as_staff: Client, staff: Any):
    session = talked(staff, "Chat")
    HandoffRecord.objects.create(
        source=session,
        phase="failed",
        reason="manual",
        source_revision=1,
        metrics={"tokens": 1, "turns": 1, "compactions": 1, "capacity": 0},
        error="no",
    )
    html = as_staff.get(reverse("handoff_web:panel", args=[session.pk])).content.decode()
    assert "1 token · 1 turn · 1 compaction" in html
    assert "1 turns" not in html


@pytest.mark.parametrize(
    ("name", "value", "sentence"),
    [
        ("handoff_ratio", "0.1", "Out of range: enter a value from 0.2–0.95."),
        ("handoff_tokens", "7999", "Out of range: enter a value from 8,000–1,000,000."),
        ("handoff_min_turns", "101", "Out of range: enter a value from 2–100."),
    ],
)
def test_an_out_of_range_value_gets_the_cards_own_sentence(
    as_staff: Client, name: str, value: str, sentence: str
):
    html = save(as_staff, name, value).content.decode()
    assert sentence in html
    assert "Ensure this value" not in html


def test_a_decimal_comma_is_told_the_one_rule_for_commas(as_staff: Client):
    html = save(as_staff, "handoff_ratio", "0,6").content.decode()
    assert "a comma only groups thousands (120,000); write decimals with a point: 0.6." in html
    assert save(as_staff, "handoff_tokens", "120,000").status_code == 200
    assert stored().handoff_ratio == 0.75 and stored().handoff_tokens == 120_000


# --- live settings ------------------------------------------------------------------------


def save_shown(client: Client, name: str, value: str, shown: str) -> Any:
    """Save ``value`` from a card that showed the field as ``shown``."""
    url = reverse("handoff_settings:field", args=[name])
    return client.post(url, {name: value, "rendered": shown}, headers=HTMX)


def test_the_card_renders_each_fields_stored_value_to_send_back(as_staff: Client):
    html = as_staff.get(reverse("handoff_settings:card")).content.decode()
    assert '<input type="hidden" name="rendered" value="0.75">' in html
    assert '<input type="hidden" name="rendered" value="false">' in html


def test_a_save_of_a_field_changed_meanwhile_is_refused_showing_the_current_value(
    as_staff: Client,
):
    assert save_shown(as_staff, "handoff_ratio", "0.6", shown="0.75").status_code == 200
    before = stored().version

    response = save_shown(as_staff, "handoff_ratio", "0.5", shown="0.75")

    html = response.content.decode()
    assert response.status_code == 409
    assert "Changed meanwhile" in html and "Nothing was saved" in html
    assert 'value="0.6"' in html and '<input type="hidden" name="rendered" value="0.6">' in html
    assert stored().handoff_ratio == 0.6 and stored().version == before


def test_saves_of_two_fields_from_two_stale_tabs_both_land(as_staff: Client):
    assert save_shown(as_staff, "handoff_ratio", "0.6", shown="0.75").status_code == 200
    assert save_shown(as_staff, "handoff_min_turns", "6", shown="4").status_code == 200
    assert save_shown(as_staff, "auto_handoff", "on", shown="false").status_code == 200
    assert (stored().handoff_ratio, stored().handoff_min_turns, stored().auto_handoff) == (
        0.6,
        6,
        True,
    )


def test_a_settings_change_is_a_follower_event_for_every_user(
    as_staff: Client, staff: Any, member: Any
):
    save(as_staff, "handoff_ratio", "0.6")
    for user in (staff, member):
        event = FollowerEvent.objects.filter(user=user, kind="settings.changed").get()
        assert event.payload["settings"]["handoff_ratio"] == 0.6
        assert event.payload["version"] == stored().version


def test_a_conversations_switch_is_a_follower_event_for_its_owner(as_staff: Client, staff: Any):
    session = talked(staff, "Chat")
    as_staff.post(reverse("handoff_web:session_action", args=[session.pk, "enable"]))
    as_staff.post(reverse("handoff_web:session_action", args=[session.pk, "enable"]))
    as_staff.post(reverse("handoff_web:session_action", args=[session.pk, "disable"]))
    deliver(staff.pk)  # what the commits run: the panels are rendered then
    switched = FollowerEvent.objects.filter(user=staff, kind="handoff.switch").order_by("seq")
    assert [(e.payload["session"], e.payload["enabled"]) for e in switched] == [
        (str(session.pk), True),
        (str(session.pk), False),
    ]
    panel = list(switched)[-1].payload["fragments"][0]
    assert 'id="handoff-switch"' in panel["html"] and "checked" not in panel["html"]
