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
    entries = timeline(session).entries
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
    assert [(e.kind, e.title or e.text) for e in timeline(session).entries] == [
        ("plugin", "Brief"),
        ("notice", "Model set to bigger-model"),
    ]


def test_a_session_without_messages_shows_no_model_selection(alice: Any):
    session = create_session(alice, title="Fresh")
    log.select_model(session, "offline-agent")
    assert timeline(session).entries == []


def test_a_limited_timeline_reads_the_latest_messages_and_counts_the_rest(
    alice: Any, django_assert_max_num_queries: Any
):
    session = create_session(alice, title="Long")
    log.select_model(session, "setup-model")  # initial setup: never shown, never counted
    for n in range(1, 6):
        log.append_message(
            session, role=Role.USER, source_kind=SourceKind.USER, content=f"q{n}", starts_turn=True
        )
        log.append_message(
            session, role=Role.ASSISTANT, source_kind=SourceKind.ASSISTANT, content=f"a{n}"
        )
        if n == 2:
            log.select_model(session, "model-2")
            log.append_event(session, "turn-start", {})  # has no line: never counted
    log.append_event(session, "notice", {"text": "late notice"})

    with django_assert_max_num_queries(5):
        shown = timeline(session, limit=3)

    # Hidden: q1 a1 q2 a2 "Model set to model-2" q3 a3 q4.
    assert shown.earlier == 8
    assert [e.text for e in shown.entries] == ["a4", "q5", "a5", "late notice"]
    everything = timeline(session, limit=None)
    assert everything.earlier == 0
    assert [e.text for e in everything.entries][:5] == [
        "q1",
        "a1",
        "q2",
        "a2",
        "Model set to model-2",
    ]
    assert len(everything.entries) == 12


def test_a_short_log_is_shown_whole(alice: Any):
    session = create_session(alice, title="Short")
    log.append_message(session, role=Role.USER, source_kind=SourceKind.USER, content="only")
    shown = timeline(session)
    assert shown.earlier == 0 and [e.text for e in shown.entries] == ["only"]
