"""The host's pages offer hooks and plugins fill them from settings (docs/design.md, The host
offers hooks, the handoff fills them): ``HOST_PAGE_PANELS``, ``HOST_TITLE_NOTES``,
``HOST_PLUGIN_ENTRY_FILTERS`` (``host/templatetags/chat_hooks.py``). Without them the host stands
alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import Client
from django.urls import reverse
from handoff_support import talked

from host import log
from host.models import Role, SourceKind

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("alice", password="pw")


@pytest.fixture
def as_alice(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


@pytest.fixture
def no_plugins(settings: Any) -> None:
    settings.HOST_PAGE_PANELS = {}
    settings.HOST_TITLE_NOTES = []
    settings.HOST_PLUGIN_ENTRY_FILTERS = []


def page(client: Client, session: Any) -> str:
    response = client.get(reverse("chat:session", args=[session.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.usefixtures("no_plugins")
def test_without_plugins_the_conversation_page_shows_no_handoff(as_alice: Client, alice: Any):
    session = talked(alice, "Weather CLI · 接续abc123")
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.PLUGIN, content="Checked (log #1)."
    )

    html = page(as_alice, session)

    assert 'id="handoff-panel"' not in html and 'id="conv-hint"' not in html
    assert 'id="review-notice"' not in html and "Hand off now" not in html
    assert '<span class="row-title" translate="no">Weather CLI · 接续abc123</span>' in html
    assert "Checked (log #1)." in html and "#entry-1" not in html


def test_the_handoff_fills_the_slots_its_settings_list(as_alice: Client, alice: Any):
    html = page(as_alice, talked(alice, "Weather CLI"))

    order = [html.index(mark) for mark in ('id="conv-hint"', 'id="handoff-panel"', 'id="review')]
    assert order == sorted(order)


def test_a_slot_renders_each_listed_template_with_the_pages_context(
    as_alice: Client, alice: Any, settings: Any
):
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], HERE / "templates"]}
    ]
    settings.HOST_PAGE_PANELS = {"conversation_panels": ["hooks/panel.html", "hooks/panel.html"]}

    html = page(as_alice, talked(alice, "Weather CLI"))

    panel = '<aside class="test-panel" data-user="alice">panel of Weather CLI</aside>'
    assert html.count(panel) == 2 and 'id="handoff-panel"' not in html
    assert html.index(panel) < html.index('id="timeline"')


def test_a_title_note_and_an_entry_filter_come_from_their_settings(
    as_alice: Client, alice: Any, settings: Any
):
    settings.HOST_TITLE_NOTES = ["builtins.len"]
    settings.HOST_PLUGIN_ENTRY_FILTERS = ["django.utils.html.strip_tags"]
    session = talked(alice, "Weather")
    log.append_message(session, role=Role.USER, source_kind=SourceKind.PLUGIN, content="**Goal**")

    html = page(as_alice, session)

    assert '<span class="row-note">7</span>' in html
    assert "Goal" in html and "<strong>Goal</strong>" not in html


def test_a_panel_for_a_slot_no_page_offers_is_refused_by_the_checks(settings: Any):
    settings.HOST_PAGE_PANELS = {"sidebar": ["hooks/panel.html"]}

    errors = [e for e in run_checks() if e.id == "host.E003"]

    assert errors and "sidebar" in errors[0].msg


def test_the_hosts_templates_load_no_plugin_tags_and_name_no_plugin_template():
    host_templates = sorted((ROOT / "templates" / "chat").glob("*.html"))
    loaded = {
        path.name: re.findall(r"{% load ([^%]+)%}", path.read_text()) for path in host_templates
    }
    libraries = {lib for loads in loaded.values() for load in loads for lib in load.split()}
    assert libraries <= {"i18n", "static", "chat_hooks", "chat_markdown"}, loaded
    for path in host_templates:
        assert '"handoff/' not in path.read_text(), path.name
