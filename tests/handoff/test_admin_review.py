"""The admin's waiting reviews with commit and discard as actions, and the relay's "Stop
forwarding" button (docs/spec.md, Recovery)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source, record_of

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, HandoffSettings, Redirect

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:handoff_handoffrecord_changelist"


@pytest.fixture
def root(client: Client, django_user_model: Any) -> Client:
    client.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    return client


def waiting_record() -> HandoffRecord:
    source = make_source()
    operations.review_on(source.pk)
    return record_of(operations.run_attempt(source.pk, manual=True))


def run_action(client: Client, action: str, record: HandoffRecord) -> str:
    response = client.post(
        reverse(CHANGELIST),
        {"action": action, "_selected_action": [str(record.pk)]},
        follow=True,
    )
    return response.content.decode()


def test_the_waiting_for_review_filter_lists_only_waiting_reviews(root: Client):
    record = waiting_record()
    other = make_source(title="Handed off without review")
    done = record_of(operations.run_attempt(other.pk, manual=True))
    html = root.get(reverse(CHANGELIST), {"review": "waiting"}).content.decode()
    assert str(record.pk)[:8] in html and str(done.pk)[:8] not in html


def test_commit_action_commits_the_waiting_review(root: Client):
    record = waiting_record()
    html = run_action(root, "commit_review", record)
    assert "Review committed for 1 conversation." in html
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.STARTED


def test_discard_action_discards_it_and_a_second_discard_is_refused(root: Client):
    record = waiting_record()
    assert "Review discarded for 1 conversation." in run_action(root, "discard_review", record)
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.FAILED
    assert "is waiting for review" in run_action(root, "discard_review", record)


def test_the_relays_page_has_a_stop_forwarding_button_that_disables_the_old_main(root: Client):
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    redirect = Redirect.objects.get(source=source)
    page = root.get(reverse("admin:handoff_redirect_change", args=[redirect.pk])).content.decode()
    assert "Stop forwarding" in page
    stop = reverse("admin:handoff_redirect_stop", args=[redirect.pk])
    assert stop in page
    assert root.get(stop).status_code == 405
    response = root.post(stop, follow=True)
    assert "Forwarding stopped for 1 conversation." in response.content.decode()
    assert not Redirect.objects.filter(source=source).exists()


def test_stop_forwarding_needs_a_staff_sign_in(client: Client):
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    redirect = Redirect.objects.get(source=source)
    client.post(reverse("admin:handoff_redirect_stop", args=[redirect.pk]))
    assert Redirect.objects.filter(source=source).exists()


def test_the_settings_row_shows_the_review_setting(root: Client):
    row, _ = HandoffSettings.objects.get_or_create(pk=1, defaults={"review_handoffs": True})
    html = root.get(reverse("admin:handoff_handoffsettings_change", args=[row.pk])).content
    assert "Review handoffs" in html.decode()
