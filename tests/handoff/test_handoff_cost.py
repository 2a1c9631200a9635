"""What a handoff costs in SQL: flat in the session's length, the log read once.

The timings are ``bench/handoff_cost.py``'s; these tests count statements, never time them.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.template import loader
from django.test.utils import CaptureQueriesContext
from handoff_support import make_source, record_of
from shared_files import SAMPLES

from bench.handoff_cost import CWD, handoff, recorded, source_with, statements_of
from follower import events
from handoff import operations, store
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.models import Activity, InboxItem, Session, SessionStatus, Team
from host.services import SessionController
from host.sessions import create_session

pytestmark = pytest.mark.django_db


def _message_reads(captured: CaptureQueriesContext) -> int:
    return sum('FROM "host_message"' in q["sql"] for q in captured.captured_queries)


def test_a_handoff_runs_as_many_statements_at_5000_messages_as_at_100():
    handoff(source_with(10))  # the settings row is created once, by the first attempt
    short, long = source_with(100), source_with(5_000)
    assert statements_of(lambda: handoff(short)) == statements_of(lambda: handoff(long))


SAMPLE_STATEMENTS = 110
"""Statements of one handoff of the epic sample in its own transactions (108 on SQLite, 109 on
PostgreSQL: its task queue's ``NOTIFY``; the log, 106 entries, is read in one plain fetch),
follower events included (one INSERT each: their fragments are rendered after the commit,
``follower.events.deliver``): an upper bound, so nothing adds to them unnoticed."""
SAMPLE_REPEATS = 3
"""The most times one SELECT may run in that handoff: the source's observation
(``SessionController.observe``) runs three times, at the guard, the claim and the seed; the
checks after the summary and before the redirect ride on the record's moves
(``handoff.attempt.stable_rows``)."""


def _imported_sample() -> Session:
    out = StringIO()
    sample = SAMPLES / "claude-code-2.x-epic.jsonl"
    call_command("import_transcript", str(sample), "--json", stdout=out, stderr=StringIO())
    return Session.objects.get(pk=json.loads(out.getvalue().splitlines()[0])["session"])


def _selects(queries: list[dict[str, Any]]) -> Counter[str]:
    return Counter(q["sql"] for q in queries if q["sql"].startswith("SELECT"))


def test_a_handoff_of_the_epic_sample_stays_within_its_statements_and_repeats():
    """The handoff's own transactions (the test's transaction never commits, so the follower's
    deliveries do not run here) read no language and render nothing."""
    source = _imported_sample()
    with CaptureQueriesContext(connection) as captured:
        count = statements_of(partial(operations.run_attempt, source.pk, manual=True))
    assert HandoffRecord.objects.get(source=source).phase == "started"
    selects = _selects(captured.captured_queries)
    [(most_repeated, repeats)] = selects.most_common(1)
    assert count.statements <= SAMPLE_STATEMENTS
    assert repeats <= SAMPLE_REPEATS, most_repeated
    assert not any("host_languagepreference" in sql for sql in selects)


@pytest.mark.django_db(transaction=True)
def test_each_commit_of_a_handoff_renders_its_events_once_in_the_language_read_once(
    monkeypatch: pytest.MonkeyPatch,
):
    """With real commits: each of the handoff's transactions that stored events is followed by
    one delivery, which reads the user's language once and renders the source's panel at most
    once however many of its events show it, with no SELECT run more than three times."""
    source = _imported_sample()
    batches: list[list[dict[str, Any]]] = []
    panels: list[int] = []
    real_deliver, real_render = events.deliver, loader.render_to_string

    def deliver(user_id: int) -> list[dict[str, Any]]:
        with CaptureQueriesContext(connection) as captured:
            panels.append(0)
            frames = real_deliver(user_id)
        batches.append(captured.captured_queries)
        return frames

    def render_to_string(template_name: str, *args: Any, **kwargs: Any) -> str:
        panels[-1] += template_name == "handoff/panel.html"
        return real_render(template_name, *args, **kwargs)

    monkeypatch.setattr(events, "deliver", deliver)
    monkeypatch.setattr("follower.fragments.render_to_string", render_to_string)
    operations.run_attempt(source.pk, manual=True)
    assert HandoffRecord.objects.get(source=source).phase == "started"
    delivered = [b for b in batches if any("UPDATE" in q["sql"] for q in b)]
    assert len(delivered) == 4  # the mark, prepare, seed, and the route held for its start
    for queries in delivered:
        selects = _selects(queries)
        languages = sum(n for sql, n in selects.items() if "host_languagepreference" in sql)
        assert languages == 1
        assert max(selects.values()) <= SAMPLE_REPEATS, selects.most_common(1)
    assert max(panels) == 1


def test_every_statement_sent_is_counted_savepoints_included():
    """Nested blocks send SAVEPOINT and RELEASE; they are statements too."""

    def nested() -> None:
        with transaction.atomic(), transaction.atomic():
            Session.objects.count()

    count = statements_of(nested)
    assert (count.statements, count.savepoints, count.writes) == (5, 4, 0)


def test_the_summary_reads_the_log_in_one_query_however_long_it_is():
    source = source_with(5_000)
    with CaptureQueriesContext(connection) as captured:
        context = SessionController().effective_context(source)
    assert _message_reads(captured) == 1
    assert len(context) == 5_000  # every entry: the brief reads the whole structure
    assert context[-1]["content"].startswith("Done:")  # the newest entry is the last


def test_the_offline_brief_names_the_latest_file_of_a_long_log():
    brief = record_of(handoff(source_with(5_000))).brief
    assert brief is not None
    assert any(a.startswith(f"{CWD}/src/module_2499.py") for a in brief["artifacts"])


def test_observe_reads_a_quiet_session_and_its_blocker_facts_in_one_query():
    source = make_source()
    with CaptureQueriesContext(connection) as captured:
        observed = SessionController().observe(str(source.pk))
    assert len(captured.captured_queries) == 1
    assert observed is not None and observed.session.pk == source.pk
    facts = (observed.activities, observed.live_subagents, observed.team_members)
    assert facts + (observed.pending_inbox,) == ([], [], 0, 0)


def test_observe_counts_every_blocker_fact():
    source = make_source()
    sub = create_session(source.owner, parent=source, title="helper")
    Activity.objects.create(session=source, kind="job")
    InboxItem.objects.create(session=source, stage="next-turn", content="later")
    team = Team.objects.create(lead=source)
    team.members.add(source, sub)
    observed = SessionController().observe(str(source.pk))
    assert observed is not None
    assert (observed.activities, observed.live_subagents) == (["job"], [str(sub.pk)])
    assert (observed.team_members, observed.pending_inbox) == (2, 1)


def test_observe_answers_none_for_an_unknown_or_malformed_id():
    assert SessionController().observe("not-a-uuid") is None
    assert SessionController().observe("00000000-0000-0000-0000-000000000001") is None


def test_a_failing_prepare_leaves_no_draft(monkeypatch):
    # The brief, the draft and its inheritance are one transaction: nothing of it stays.
    source = make_source()
    before = Session.objects.count()

    real_move = store.move

    def move(record: HandoffRecord, phase: Phase, **fields: Any) -> HandoffRecord:
        if phase == Phase.PREPARED:
            raise RuntimeError("disk full")
        return real_move(record, phase, **fields)

    monkeypatch.setattr(store, "move", move)
    record = record_of(operations.run_attempt(source.pk, manual=True))
    assert record.phase == "failed" and "disk full" in record.error
    assert record.brief is None and record.target_id is None
    assert Session.objects.count() == before


def test_a_handoffs_statements_replayed_bare_hand_off_another_source():
    """The benchmark's ``sql`` column replays one handoff's own statements on a fresh source;
    the replay must do what the handoff did, or the column would time nothing."""
    handoff(source_with(10))
    taped, source = source_with(10), source_with(10)
    recording = recorded(taped)
    recording.replay({taped.pk: source.pk})()
    moved = HandoffRecord.objects.get(source_id=source.pk)
    assert moved.phase == Phase.STARTED
    redirect = store.redirect_of(source.pk)
    assert redirect is not None and redirect.destination_id == moved.target_id
    assert Session.objects.get(pk=moved.target_id).status == SessionStatus.RUNNING
