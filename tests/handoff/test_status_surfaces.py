"""One status report, the same facts on all four surfaces.

``manage.py handoff status``, the API, ``/handoff status`` in the composer and the settings card
all show the report built by ``handoff.status`` for the same session.
"""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.formats import number_format
from handoff_support import make_source, make_user

from handoff import operations
from handoff.inheritance import readable
from handoff.web.panel import BASIS_WORDS
from host.models import Session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def handed_off(immediate_tasks: None) -> Session:
    """A source handed off once: its report carries a last record and an inheritance report."""
    source = make_source(make_user("ada"))
    assert operations.run_attempt(source.pk, manual=True).ok
    return source


def command_report(session: Session) -> dict[str, Any]:
    out = StringIO()
    call_command("handoff", "status", str(session.pk), "--json", stdout=out)
    return json.loads(out.getvalue())


def api_report(client: Client, session: Session) -> dict[str, Any]:
    response = client.post(
        f"/api/sessions/{session.pk}/handoff",
        data={"action": "status"},
        content_type="application/json",
    )
    assert response.status_code == 200
    return response.json()


def composer_html(client: Client, session: Session) -> str:
    response = client.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": "/handoff status", "client_id": "status-1"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    return response.content.decode()


def card_html(client: Client) -> str:
    response = client.get(reverse("handoff_settings:card"))
    assert response.status_code == 200
    return response.content.decode()


def facts(report: dict[str, Any]) -> list[str]:
    """What a reader must find on an HTML surface, as the report states it (an inheritance row
    in words, its outcome's identifier in the cell's class)."""
    last = report["last"]
    return [
        report["session"],
        number_format(report["tokens"]["value"], force_grouping=True),
        str(BASIS_WORDS[report["tokens"]["basis"]]),
        report["tokens"]["label"],
        "disabled" if not report["enabled"] else "enabled",
        str(report["turns"]),
        last["phase"],
        last["reason"],
        str(last["target"])[:8],
        *(str(row["setting"]) for row in readable(report["inheritance"])),
        *(f'class="outcome-{row["outcome"]}"' for row in report["inheritance"]),
    ]


def test_command_and_api_print_the_same_report(handed_off: Session, client: Client):
    client.force_login(handed_off.owner)
    assert command_report(handed_off) == api_report(client, handed_off)


def test_composer_and_card_show_the_same_facts_as_the_report(handed_off: Session, client: Client):
    client.force_login(handed_off.owner)
    report = command_report(handed_off)
    assert report["last"]["phase"] == "started" and report["inheritance"]
    for html in (composer_html(client, handed_off), card_html(client)):
        missing = [fact for fact in facts(report) if fact not in html]
        assert missing == []


def test_the_relay_notice_names_the_successor_by_its_title_without_its_id():
    source = make_source()
    record = operations.run_attempt(source.pk, manual=True).record
    assert record is not None and record.target_id is not None
    successor = Session.objects.get(pk=record.target_id)
    notice = source.messages.filter(content__startswith="Handed off to").get().content
    assert f"“{successor.title}”" in notice
    assert str(successor.pk) not in notice
