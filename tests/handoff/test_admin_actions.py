"""The admin's "Open the successor" for staff who do not own the conversation.

A chat page belongs to its owner (anyone else gets 404), so the action opens the successor's
admin page for such staff, or says why it cannot.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from handoff.models import HandoffRecord, Redirect
from host.sessions import create_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_handoff(django_user_model: Any) -> HandoffRecord:
    alice = django_user_model.objects.create_user("alice", password="pw")
    source = create_session(alice, title="Weather CLI")
    successor = create_session(alice, title="Weather CLI, continued")
    record = HandoffRecord.objects.create(
        source=source, target=successor, phase="started", reason="manual", source_revision=2
    )
    Redirect.objects.create(source=source, destination=successor, record=record)
    return record


def open_successor(client: Client, model: str, pk: Any) -> Any:
    action = "open_successor" if model == "handoffrecord" else "open_destination"
    return client.post(
        reverse(f"admin:handoff_{model}_changelist"),
        {"action": action, "_selected_action": [str(pk)]},
        follow=True,
    )


@pytest.mark.parametrize("model", ["handoffrecord", "redirect"])
def test_a_superuser_who_does_not_own_it_gets_its_admin_page(
    client: Client, django_user_model: Any, alices_handoff: HandoffRecord, model: str
):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    pk = alices_handoff.pk if model == "handoffrecord" else alices_handoff.source_id

    response = open_successor(client, model, pk)

    assert response.status_code == 200
    successor = alices_handoff.target
    assert successor is not None
    assert response.redirect_chain[-1][0] == reverse(
        "admin:host_session_change", args=[successor.pk]
    )
    html = response.content.decode()
    assert "The successor belongs to alice: only they open its chat page" in html
    assert "Weather CLI, continued" in html


def test_staff_who_may_not_view_sessions_are_told_why(
    client: Client, django_user_model: Any, alices_handoff: HandoffRecord
):
    staff = django_user_model.objects.create_user("sam", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_handoffrecord"))
    client.force_login(staff)

    response = open_successor(client, "handoffrecord", alices_handoff.pk)

    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse("admin:handoff_handoffrecord_changelist")
    assert "you may not view sessions in the admin" in response.content.decode()
