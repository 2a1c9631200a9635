"""What the conversation page shows, entry by entry (host.timeline)."""

from __future__ import annotations

from typing import Any

import pytest

from host import log
from host.models import Role, SourceKind
from host.sessions import create_session
from host.timeline import split_heading, timeline

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("alice", password="pw")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("# Handoff brief from “X”\n\n**Goal:** g", ("Handoff brief from “X”", "**Goal:** g")),
        ("\n# Closed #\nbody", ("Closed", "body")),
        ("# Only a title", ("Only a title", "")),
        ("## Not level one\ntext", None),
        ("#hashtag", None),
        ("Handed off to “Y”.", None),
        ("# \nno title", None),
    ],
)
def test_split_heading(content: str, expected: tuple[str, str] | None):
    assert split_heading(content) == expected


def test_plugin_messages_are_a_titled_card_or_a_notice(alice: Any):
    session = create_session(alice, title="S")
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.PLUGIN, content="# Brief\n\n- item"
    )
    log.append_message(
        session, role=Role.SYSTEM, source_kind=SourceKind.PLUGIN, content="Handed off."
    )
    entries = timeline(session)
    assert [(e.kind, e.title, e.text) for e in entries] == [
        ("plugin", "Brief", "- item"),
        ("notice", "", "Handed off."),
    ]


def test_initial_model_selection_is_hidden_and_later_changes_show(alice: Any):
    session = create_session(alice, title="Successor")
    log.select_model(session, "offline-agent", source="inherited")
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.PLUGIN, content="# Brief\n\ngoal"
    )
    log.select_model(session, "bigger-model")
    assert [(e.kind, e.title or e.text) for e in timeline(session)] == [
        ("plugin", "Brief"),
        ("notice", "Model set to bigger-model"),
    ]


def test_a_session_without_messages_shows_no_model_selection(alice: Any):
    session = create_session(alice, title="Fresh")
    log.select_model(session, "offline-agent")
    assert timeline(session) == []
