"""One word for one thing, in plain words: the status report and the admin say "conversation"
where the chat does, never "session", "main state", "redirect" or "plan mode available"; the
admin names a refused conversation by its title, renders the brief's Markdown, explains the
context windows' JSON and groups its numbers as the app does (120,000)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import strip_tags
from handoff_support import make_source, make_user, talked

from handoff import operations
from handoff.models import HandoffRecord, HandoffSettings, MainState, Redirect

pytestmark = pytest.mark.django_db(transaction=True)

# "Session Handoff" is the product's name; every other "session" is a word for a conversation.
SESSION_WORD = re.compile(r"\bsessions?\b(?<!Session)|\bSessions?\b(?! Handoff)")
JARGON = ("Main state", "main state", "Redirect", "redirect", "Plan mode available", "Blocker")
CHINESE_JARGON = ("主会话", "重定向", "Blocker", "Redirect", "Conversation", "Automatic")


def text_of(html: str) -> str:
    """The page's text without tags, scripts or styles, whitespace collapsed."""
    html = re.sub(r"<(script|style).*?</\1>", "", html, flags=re.S)
    return " ".join(strip_tags(html).split())


def in_english(text: str) -> list[str]:
    return SESSION_WORD.findall(text) + [word for word in JARGON if word in text]


def status_report(client: Client, session: Any, language: str) -> str:
    client.cookies["django_language"] = language
    response = client.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": "/handoff status", "client_id": f"status-{language}"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    return text_of(response.content.decode())


def test_the_status_report_says_conversation_in_plain_words(immediate_tasks, client: Client):
    source = make_source(make_user("ada"))
    record = operations.run_attempt(source.pk, manual=True).record
    assert record is not None
    successor = HandoffRecord.objects.get(pk=record.pk).target
    client.force_login(source.owner)

    english = status_report(client, successor, "en")
    chinese = status_report(client, successor, "zh-hans")

    assert "Conversation" in english and "Messages forwarded to" in english
    assert in_english(english) == []
    assert "会话" in chinese and [word for word in CHINESE_JARGON if word in chinese] == []


@pytest.fixture
def admin(client: Client, django_user_model: Any) -> Any:
    """A superuser's client and a handed-off pair: its record, forwarding and handoff state."""
    root = django_user_model.objects.create_superuser("root", password="pw")
    source, successor = talked(root, "Weather CLI"), talked(root, "Weather CLI, continued")
    record = HandoffRecord.objects.create(
        source=source,
        target=successor,
        phase="started",
        reason="context-pressure",
        source_revision=4,
        metrics={"tokens": 125080, "turns": 9, "compactions": 1, "capacity": 200000},
        brief={
            "goal": "Ship the `weather` CLI",
            "verified": ["`python -m unittest` → Ran 22 tests OK (log #28)"],
        },
    )
    Redirect.objects.create(source=source, destination=successor, record=record)
    MainState.objects.create(session=successor, enabled=True, inherited_from=source)
    HandoffSettings.objects.get_or_create(pk=1)
    client.force_login(root)
    return client, record


def admin_pages(client: Client, record: HandoffRecord, language: str) -> dict[str, str]:
    client.cookies["django_language"] = language
    state = MainState.objects.get()
    urls = {
        "index": reverse("admin:index"),
        "records": reverse("admin:handoff_handoffrecord_changelist"),
        "record": reverse("admin:handoff_handoffrecord_change", args=[record.pk]),
        "states": reverse("admin:handoff_mainstate_changelist"),
        "state": reverse("admin:handoff_mainstate_change", args=[state.pk]),
        "routes": reverse("admin:handoff_redirect_changelist"),
        "route": reverse("admin:handoff_redirect_change", args=[record.source_id]),
        "settings list": reverse("admin:handoff_handoffsettings_changelist"),
        "settings": reverse("admin:handoff_handoffsettings_change", args=[1]),
    }
    return {name: text_of(client.get(url).content.decode()) for name, url in urls.items()}


def test_the_admin_says_conversation_in_plain_words(admin: Any):
    client, record = admin

    english = admin_pages(client, record, "en")
    chinese = admin_pages(client, record, "zh-hans")

    assert {name: in_english(text) for name, text in english.items() if in_english(text)} == {}
    assert "Handoff states" in english["index"] and "Forwarding routes" in english["index"]
    assert "Handoff state of “Weather CLI, continued”" in english["state"]
    assert "Weather CLI → Weather CLI, continued" in english["route"]
    for name, text in chinese.items():
        assert [word for word in CHINESE_JARGON if word in text] == [], name


def test_the_admin_groups_numbers_and_renders_the_brief(admin: Any):
    client, record = admin
    html = client.get(reverse("admin:handoff_handoffrecord_change", args=[record.pk]))
    page = html.content.decode()

    assert "125,080" in text_of(
        client.get(reverse("admin:handoff_handoffrecord_changelist")).content.decode()
    )
    assert "125,080 tokens · 9 turns · 1 compaction · context window 200,000" in text_of(page)
    assert "<code>python -m unittest</code> → Ran 22 tests OK" in page
    assert "<code>weather</code>" in page and "`" not in text_of(page)
    settings = text_of(
        client.get(reverse("admin:handoff_handoffsettings_change", args=[1])).content.decode()
    )
    assert "Token ceiling: 120,000" in settings
    assert '{"my-model": 64000' in settings  # the context windows' example
    listed = text_of(
        client.get(reverse("admin:handoff_handoffsettings_changelist")).content.decode()
    )
    assert "120,000" in listed


def test_a_refused_action_names_the_conversation_once_by_its_title(admin: Any):
    client, record = admin
    response = client.post(
        reverse("admin:handoff_handoffrecord_changelist"),
        {"action": "enable_source", "_selected_action": [str(record.pk)]},
        follow=True,
    )
    (message,) = [str(m) for m in response.context["messages"]]

    assert message.startswith("“Weather CLI”: This conversation was already handed off to")
    assert str(record.source_id) not in message and str(record.target_id) not in message
    assert message in text_of(response.content.decode())
