"""What follower events carry to the page, rendered once (follower.fragments)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.management import call_command
from django.db import transaction
from django.template import loader
from django.utils import translation
from shared_files import TRANSCRIPTS

from follower.events import Frame, Resync, events_after
from handoff import operations, store
from handoff.attempt import Outcome
from handoff.core.phases import Phase, Reason
from handoff.shapes import MetricsOut
from handoff.web.follow import Kind as HandoffKind
from host import lifecycle
from host.follow import Kind as SessionKind
from host.log import append_message, select_model
from host.models import Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db

NO_METRICS = MetricsOut(tokens=0, turns=0, compactions=0, capacity=0)


def replayed(user: AbstractBaseUser, after: int = 0) -> list[Frame]:
    frames = events_after(user.pk, after)
    assert not isinstance(frames, Resync)
    return frames


def talked(owner: AbstractBaseUser, title: str = "work") -> Session:
    session = create_session(owner, cwd="/srv/project", title=title)
    append_message(session, role="user", source_kind="user", content="hi", starts_turn=True)
    return session


def html(frame: Frame) -> str:
    return "".join(f["html"] for f in frame["payload"]["fragments"])


def test_a_live_message_is_session_entry_appended_to_its_pages_timeline(ada):
    session = talked(ada)
    last = replayed(ada)[-1]["id"]
    message = append_message(session, role="assistant", source_kind="assistant", content="**Done**")
    [frame] = replayed(ada, last)
    assert frame["kind"] == SessionKind.SESSION_ENTRY
    [entry, *_] = frame["payload"]["fragments"]
    assert entry["session"] == str(session.pk)
    assert entry["unless"] == f"#entry-{message.seq}"
    assert 'hx-swap-oob="beforeend:#timeline"' in entry["html"]
    assert f'id="entry-{message.seq}"' in entry["html"]
    assert "<strong>Done</strong>" in entry["html"]
    assert 'id="conv-meta"' in entry["html"]


def test_a_turn_start_and_an_early_model_selection_publish_no_entry(ada):
    session = create_session(ada, cwd="/srv/project", title="work")
    select_model(session, "gpt-5")
    message = append_message(session, role="user", source_kind="user", content="go")
    before = replayed(ada)[-1]["id"]
    lifecycle.begin_turn(session, user_initiated=True, message=message)
    kinds = [f["kind"] for f in replayed(ada, before)]
    assert SessionKind.SESSION_ENTRY not in kinds
    assert kinds == [SessionKind.SESSION_UPDATED]


def test_an_import_publishes_no_entries(ada):
    path = TRANSCRIPTS / "claude-code-1.0-short.jsonl"
    if not path.is_file():
        pytest.skip(f"shared transcripts not found at {TRANSCRIPTS.resolve()} ({path.name})")
    call_command("import_transcript", str(path), "--owner", ada.get_username(), stdout=StringIO())
    kinds = {f["kind"] for f in replayed(ada)}
    assert SessionKind.SESSION_ENTRY not in kinds
    assert SessionKind.SESSION_ADDED in kinds


def test_a_session_event_carries_its_row_and_the_working_line(ada):
    session = talked(ada)
    before = replayed(ada)[-1]["id"]
    lifecycle.begin_turn(session, user_initiated=False)
    [frame] = replayed(ada, before)
    assert frame["kind"] == SessionKind.SESSION_UPDATED
    row = frame["payload"]["row_html"]
    assert f'id="row-{session.pk}"' in row
    assert 'data-shown="true"' in row
    assert "Running" in row
    working, heading = frame["payload"]["fragments"]
    assert working["session"] == heading["session"] == str(session.pk)
    assert 'id="working"' in working["html"]
    assert " hidden" not in working["html"]
    assert 'id="conv-title"' in heading["html"] and session.title in heading["html"]


def test_a_blank_sessions_row_is_marked_hidden(ada):
    create_session(ada, cwd="/srv/project", title="fresh")
    [frame] = replayed(ada)
    assert 'data-shown="false"' in frame["payload"]["row_html"]


def test_a_record_event_carries_the_sources_panel_with_its_phase(ada):
    source = talked(ada)
    before = replayed(ada)[-1]["id"]
    store.create_record(
        source_id=source.pk, reason=Reason.MANUAL, metrics=NO_METRICS, source_revision=0
    )
    [frame] = replayed(ada, before)
    [panel] = frame["payload"]["fragments"]
    assert panel["session"] == str(source.pk)
    assert 'id="handoff-panel"' in panel["html"]
    assert 'hx-swap-oob="true"' in panel["html"]
    assert f'data-phase="{Phase.SUMMARIZING}"' in panel["html"]
    assert "every 1s" not in panel["html"]


def test_a_panel_several_events_of_one_commit_show_is_sent_once_as_committed(ada):
    """Rendered after the commit, the phases of one transaction would all carry the same
    panel: only the last carries it, showing the phase the transaction left."""
    source, target = talked(ada), talked(ada, "next")
    before = replayed(ada)[-1]["id"]
    with transaction.atomic():
        record = store.create_record(
            source_id=source.pk, reason=Reason.MANUAL, metrics=NO_METRICS, source_revision=0
        )
        store.move(record, Phase.PREPARED, target_id=target.pk)
    frames = replayed(ada, before)
    assert [f["payload"]["phase"] for f in frames] == [Phase.SUMMARIZING, Phase.PREPARED]
    assert [len(f["payload"]["fragments"]) for f in frames] == [0, 1]
    assert f'data-phase="{Phase.PREPARED}"' in frames[-1]["payload"]["fragments"][0]["html"]


def test_redirect_committed_carries_the_successors_row(ada):
    source, successor = talked(ada), talked(ada, "next")
    before = replayed(ada)[-1]["id"]
    store.add_redirect(source.pk, successor.pk, None)
    [frame] = replayed(ada, before)
    assert frame["kind"] == HandoffKind.REDIRECT_COMMITTED
    assert f'id="row-{successor.pk}"' in frame["payload"]["row_html"]


def test_the_commits_phase_event_carries_the_banner(ada):
    source, successor = talked(ada), talked(ada, "next")
    record = store.create_record(
        source_id=source.pk, reason=Reason.MANUAL, metrics=NO_METRICS, source_revision=0
    )
    store.move(record, Phase.PREPARED, target_id=successor.pk)
    before = replayed(ada)[-1]["id"]
    store.add_redirect(source.pk, successor.pk, record)
    store.move(record, Phase.COMMITTED)
    [route, phase] = replayed(ada, before)
    assert (route["kind"], phase["kind"]) == (
        HandoffKind.REDIRECT_COMMITTED,
        HandoffKind.HANDOFF_PHASE,
    )
    assert "This conversation continues in" in html(phase)
    assert f'href="/s/{successor.pk}/"' in html(phase)


def test_fragments_are_rendered_in_the_users_language(ada, monkeypatch: Any):
    asked: list[int] = []
    rendered_in: list[str | None] = []
    original = loader.render_to_string

    def language_of(user_id: int) -> str:
        asked.append(user_id)
        return "zh-hans"

    def render_to_string(*args: Any, **kwargs: Any) -> str:
        rendered_in.append(translation.get_language())
        return original(*args, **kwargs)

    monkeypatch.setattr("follower.sources.language", language_of)
    monkeypatch.setattr("follower.fragments.render_to_string", render_to_string)
    talked(ada)
    assert not rendered_in  # nothing is rendered in the writers' transactions
    replayed(ada)  # the commit's delivery: rendered then
    assert asked == [ada.pk]  # once for the batch
    assert rendered_in and set(rendered_in) == {"zh-hans"}


def test_a_review_waiting_reaches_the_other_tabs_in_the_panel(ada):
    """The review form rides in the phase event (its post carries the page's CSRF
    header, so the form rendered without a request still works)."""
    source = talked(ada)
    operations.review_on(source.pk)
    before = replayed(ada)[-1]["id"]
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome is Outcome.WAITING_FOR_REVIEW, outcome.detail
    phases = [f for f in replayed(ada, before) if f["kind"] == HandoffKind.HANDOFF_PHASE]
    assert phases[-1]["payload"]["phase"] == Phase.PREPARED
    assert 'id="handoff-review-form"' in html(phases[-1])
