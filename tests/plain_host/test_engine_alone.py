"""The engine without the settings card: a host that installs ``handoff`` (and its pages) but
not ``handoff_settings`` migrates, stores the global settings and hands off.

Meant for ``pytest tests/plain_host/test_engine_alone.py --ds=tests.plain_host.engine_settings``
(``make test``); it holds on the plain host with the card too.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from handoff import operations, services
from handoff.models import HandoffRecord, HandoffSettings
from tests.plain_host import chat
from tests.plain_host.models import Conversation

pytestmark = pytest.mark.django_db


def _conversation(owner: Any) -> Conversation:
    conversation = Conversation.objects.create(owner=owner, title="Tidy the README", cwd="/w")
    for i in range(5):
        chat.append(conversation, "user", f"Please tidy section {i}.")
        chat.answer(conversation, tokens=150_000)
    return conversation


def test_the_global_settings_are_stored_in_the_engines_table() -> None:
    services.settings_store().save(auto_handoff=True, handoff_ratio=0.5)
    stored = HandoffSettings.objects.get()
    assert (stored.auto_handoff, stored.handoff_ratio) == (True, 0.5)


def test_a_handoff_runs_and_the_page_shows_its_panel(
    django_user_model: Any, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    alice = django_user_model.objects.create(username="alice")
    source = _conversation(alice)
    client.force_login(alice)
    operations.enable(source.pk)
    panel = client.get(reverse("handoff_web:panel", args=[source.pk]))
    assert panel.status_code == 200
    assert "The global switch is off" in panel.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.record is not None
    assert HandoffRecord.objects.get(pk=outcome.record.pk).phase == "started"
    assert client.get(f"/c/{source.pk}/").status_code == 200
