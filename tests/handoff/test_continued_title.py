"""A handed-off conversation keeps the seed's "· 接续xxxxxx" title suffix, and every place that
shows such a title says what it means beside it, in the reader's language: the session list,
the line under the heading, the tab title and the lineage page."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source, record_of

from handoff import operations
from host.models import Session

pytestmark = pytest.mark.django_db

NOTES = {"en": "接续 = continued in a successor", "zh-hans": "已由后继会话接续"}
BRACKETS = {"en": "({})", "zh-hans": "（{}）"}


@pytest.fixture
def handed_off(client: Client) -> Session:
    source = make_source(title="Build the weather CLI")
    record_of(operations.run_attempt(source.pk, manual=True))
    source.refresh_from_db()
    client.force_login(source.owner)
    return source


def read(client: Client, url: str, language: str) -> str:
    client.cookies["django_language"] = language
    return client.get(url).content.decode()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_place_a_continued_title_shows_says_what_the_suffix_means(
    client: Client, handed_off: Session, language: str
) -> None:
    note = NOTES[language]
    bracketed = BRACKETS[language].format(note)
    assert re.fullmatch(r"Build the weather CLI · 接续[0-9a-f]{6}", handed_off.title)

    page = read(client, reverse("chat:session", args=[handed_off.pk]), language)
    lineage = read(client, reverse("handoff_web:lineage", args=[handed_off.pk]), language)

    assert f"<title>{handed_off.title} {bracketed} · Session Handoff</title>" in page
    assert f'<span class="conv-hint-note">{note}</span> · ' in page
    row = page.split(f'id="row-{handed_off.pk}"', 1)[1].split("</li>", 1)[0]
    assert f'<span class="row-note">{note}</span>' in row
    assert f'{handed_off.title}</a> <span class="title-note">{bracketed}</span>' in lineage
    assert f"{handed_off.title} {bracketed} · Session Handoff</title>" in lineage


def test_a_plain_title_has_no_note(client: Client, handed_off: Session) -> None:
    successor = Session.objects.exclude(pk=handed_off.pk).get()
    page = read(client, reverse("chat:session", args=[successor.pk]), "en")
    row = page.split(f'id="row-{successor.pk}"', 1)[1].split("<details", 1)[0]
    assert "row-note" not in row and "conv-hint-note" not in page
