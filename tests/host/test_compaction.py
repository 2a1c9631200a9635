"""host.compaction: in-place summaries that count, shrink the meter and never lose a message."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from host import compaction, log
from host.models import Message, Session, SessionEvent, SessionEventKind
from host.sessions import create_session
from host.usage import Usage, measure

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(django_user_model: Any) -> Session:
    owner: AbstractBaseUser = django_user_model.objects.create_user("ada")
    return create_session(owner, model="gpt-4o")


def converse(session: Session, rounds: int = 6) -> None:
    for i in range(rounds):
        log.append_message(
            session,
            role="user",
            source_kind="user",
            content=f"Step {i}: edit /srv/app/module_{i}.py and check https://example.org/doc/{i} "
            + "details " * 60,
        )
        log.append_message(
            session, role="assistant", source_kind="assistant", content=f"Done step {i}. " * 40
        )


def test_compact_marks_messages_compacted_counts_and_the_meter_drops(session: Session):
    converse(session)
    before = measure(session)
    count = Message.objects.count()

    event = compaction.compact(session, trigger="manual")

    session.refresh_from_db()
    assert session.compactions == 1
    assert Message.objects.count() == count
    assert not Message.objects.filter(session=session, compacted=False).exists()
    assert event.kind == SessionEventKind.COMPACTION and event.data["trigger"] == "manual"
    assert measure(session) < before / 2


def test_the_offline_summary_keeps_requests_and_references(session: Session):
    converse(session)
    summary = compaction.compact(session).data["summary"]
    assert summary.startswith("Summary of 12 earlier message(s) (offline, extractive).")
    assert "Step 5: edit /srv/app/module_5.py" in summary
    assert "/srv/app/module_5.py" in summary.split("Files and links:")[1]
    assert "https://example.org/doc/5" in summary
    assert "Latest answer: Done step 5." in summary
    assert len(summary) <= compaction.SUMMARY_MAX_CHARS


def test_a_second_compaction_carries_the_earlier_summary(session: Session):
    converse(session, 2)
    compaction.compact(session)
    converse(session, 2)
    summary = compaction.compact(session).data["summary"]
    assert "Earlier summary: Summary of 4 earlier message(s)" in summary
    assert Session.objects.get(pk=session.pk).compactions == 2


def test_compact_is_deterministic(session: Session, django_user_model: Any):
    converse(session)
    twin = create_session(session.owner)
    converse(twin)
    assert compaction.compact(session).data["summary"] == compaction.compact(twin).data["summary"]


def test_nothing_to_compact_is_refused(session: Session):
    with pytest.raises(compaction.CompactionRefused, match="nothing to compact"):
        compaction.compact(session)
    assert Session.objects.get(pk=session.pk).compactions == 0


def test_an_unknown_trigger_is_refused(session: Session):
    converse(session, 1)
    with pytest.raises(ValueError, match="unknown compaction trigger"):
        compaction.compact(session, trigger="cron")
    assert not SessionEvent.objects.filter(kind=SessionEventKind.COMPACTION).exists()


def test_a_message_arriving_while_summarizing_aborts_the_compaction(
    session: Session, monkeypatch: pytest.MonkeyPatch
):
    converse(session, 2)
    extract = compaction._extract

    def summarize_while_input_arrives(context: Any) -> str:
        log.append_message(session, role="user", source_kind="user", content="late input")
        return extract(context)

    monkeypatch.setattr(compaction, "_extract", summarize_while_input_arrives)
    with pytest.raises(compaction.CompactionRefused, match="moved on"):
        compaction.compact(session)
    assert Message.objects.filter(session=session, compacted=False).count() == 5
    assert Session.objects.get(pk=session.pk).compactions == 0


def test_with_an_endpoint_the_summary_is_one_model_call(session: Session, fake_llm: Any):
    fake_llm.answer = "  The user refactors the app; module_1 is next.  "
    converse(session, 2)

    event = compaction.compact(session, trigger="auto")

    assert event.data == {
        "trigger": "auto",
        "summary": "The user refactors the app; module_1 is next.",
    }
    assert len(fake_llm.requests) == 1
    body = fake_llm.requests[0]["body"]
    assert body["max_tokens"] == compaction.SUMMARY_MAX_TOKENS
    assert "/srv/app/module_1.py" in body["messages"][1]["content"]
    assert fake_llm.requests[0]["headers"]["x-handoff-purpose"] == "compaction"


def test_a_failing_model_compacts_nothing(session: Session, fake_llm: Any):
    fake_llm.status = 500
    converse(session, 1)
    with pytest.raises(Exception, match="fake failure"):
        compaction.compact(session)
    assert not Message.objects.filter(session=session, compacted=True).exists()


def assistant_with_prompt(session: Session, prompt_tokens: int) -> None:
    log.append_message(
        session,
        role="assistant",
        source_kind="assistant",
        content="answer",
        usage=Usage(uncached_input=prompt_tokens, output=10),
    )


def test_auto_compaction_runs_above_ninety_percent_of_the_window(session: Session):
    converse(session, 1)
    assistant_with_prompt(session, 9_001)
    event = compaction.maybe_auto_compact(session, 10_000)
    assert event is not None and event.data["trigger"] == "auto"
    assert compaction.pressure(session) < 1_000


def test_auto_compaction_waits_below_ninety_percent(session: Session):
    converse(session, 1)
    assistant_with_prompt(session, 8_999)
    assert compaction.maybe_auto_compact(session, 10_000) is None
    assert Session.objects.get(pk=session.pk).compactions == 0


def test_auto_compaction_needs_a_known_capacity(session: Session):
    converse(session, 1)
    assistant_with_prompt(session, 9_500)
    assert compaction.maybe_auto_compact(session, 0) is None


def test_pressure_uses_the_meter_after_a_compaction_until_the_next_model_call(session: Session):
    converse(session, 1)
    assistant_with_prompt(session, 50_000)
    assert compaction.pressure(session) == 50_000
    compaction.compact(session)
    assert compaction.pressure(session) == measure(session) < 1_000
    assistant_with_prompt(session, 2_000)
    assert compaction.pressure(session) == 2_000
