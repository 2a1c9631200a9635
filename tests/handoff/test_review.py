"""Review before the successor starts (docs/spec.md, Review):
the attempt waits at ``prepared``, commit runs step 8 with the edited brief, discard and expiry
discard the draft, recovery leaves a waiting review alone."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from handoff_support import add_turn, make_source, record_of, target_of

from handoff import attempt as attempts
from handoff import operations, recovery, review, services, store
from handoff.attempt import Outcome
from handoff.core.brief import MAX_BRIEF_CHARS
from handoff.core.phases import Phase
from handoff.exceptions import InvalidBrief, NoReviewWaiting, ReviewFailed, ReviewWaiting
from handoff.models import HandoffRecord
from host.models import Message, Session
from host.signals import session_idle

pytestmark = pytest.mark.django_db

EDITED = {
    "goal": "Ship the streaming parser, reviewed",
    "decisions": ["Keep the public API", "Stream with a generator"],
    "constraints": ["Do not touch the API"],
    "artifacts": ["/work/demo/src/parser.py"],
    "verified": [],
    "pending": [],
    "next_steps": ["Run /work/demo/tests"],
    "uncertainties": [],
}


def waiting_review(**source_fields: Any) -> tuple[Session, HandoffRecord]:
    """A main whose manual handoff waits for review (the conversation chose review)."""
    source = make_source(**source_fields)
    operations.review_on(source.pk)
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome is Outcome.WAITING_FOR_REVIEW, outcome.detail
    return source, record_of(outcome)


def unwoken(session_id: Any) -> bool:
    controller = services.session_controller()
    assert controller is not None
    return controller.is_unwoken_draft(str(session_id))


def waiting_id(source: Session) -> Any:
    found = review.waiting(source.pk)
    return found.pk if found is not None else None


def seed_text(successor: Session) -> str:
    return Message.objects.filter(session=successor).earliest("seq").content


def test_with_review_on_the_attempt_waits_at_prepared_with_its_draft_unstarted():
    source, record = waiting_review()
    assert record.phase == Phase.PREPARED
    assert record.review_until is not None and record.review_until > timezone.now()
    draft = target_of(record)
    assert unwoken(draft.pk)
    assert store.redirect_of(source.pk) is None
    report = operations.status(source.pk)
    assert report["review"] is True and report["requested"] is False
    assert report["last"] is not None and report["last"]["review_until"] is not None


def test_the_settings_review_switch_makes_every_handoff_wait_unless_the_conversation_opts_out():
    services.settings_store().save(review_handoffs=True)
    source = make_source()
    assert operations.run_attempt(source.pk, manual=True).outcome is Outcome.WAITING_FOR_REVIEW
    other = make_source(title="Another task")
    operations.review_off(other.pk)
    assert operations.run_attempt(other.pk, manual=True).outcome is Outcome.STARTED


def test_review_edited_and_committed_seeds_the_successor_with_the_edited_brief():
    source, record = waiting_review()
    model_brief = record.brief
    operations.commit_review(source.pk, EDITED)
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    assert record.brief == EDITED
    assert record.original_brief == model_brief
    assert record.review_until is None
    successor = target_of(record)
    text = seed_text(successor)
    assert "Ship the streaming parser, reviewed" in text
    assert "Stream with a generator" in text
    assert operations.status(source.pk)["redirect"] == str(successor.pk)
    assert operations.status(source.pk)["requested"] is False


def test_commit_without_edits_seeds_the_models_brief_and_keeps_no_original():
    source, record = waiting_review()
    operations.act("commit", source.pk)
    record.refresh_from_db()
    assert record.phase == Phase.STARTED and record.original_brief is None
    assert record.brief is not None and record.brief["goal"] in seed_text(target_of(record))


def test_review_refused_after_new_input_discards_the_draft_and_leaves_the_source():
    source, record = waiting_review()
    draft = target_of(record)
    title = Session.objects.get(pk=source.pk).title
    add_turn(source, "Actually, also handle /work/demo/src/lexer.py first.")
    with pytest.raises(ReviewFailed, match="changed"):
        operations.commit_review(source.pk, EDITED)
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    draft.refresh_from_db()
    assert draft.archived is True
    assert store.redirect_of(source.pk) is None
    assert Session.objects.get(pk=source.pk).title == title
    assert record.brief == EDITED  # the edited brief went to disk first


def test_a_draft_written_to_while_its_review_waited_is_kept_and_the_commit_fails():
    """Someone opened the draft successor and wrote to it before the review ended: committing
    fails (no route, the source continues) and the draft keeps what was written there."""
    source, record = waiting_review()
    draft = target_of(record)
    add_turn(draft, "hello draft")
    with pytest.raises(ReviewFailed, match="written to before its brief"):
        operations.commit_review(source.pk, EDITED)
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    draft.refresh_from_db()
    assert draft.archived is False
    assert Message.objects.filter(session=draft, content="hello draft").exists()
    assert store.redirect_of(source.pk) is None


def test_bad_edited_brief_is_refused_and_changes_nothing():
    source, record = waiting_review()
    for bad in (
        {**EDITED, "goal": "  "},
        {**EDITED, "decisions": "one string"},
        {**EDITED, "mood": ["great"]},
        {**EDITED, "pending": ["x" * MAX_BRIEF_CHARS]},
    ):
        with pytest.raises(InvalidBrief):
            operations.commit_review(source.pk, bad)
    after = HandoffRecord.objects.get(pk=record.pk)
    assert (after.phase, after.brief, after.original_brief) == (Phase.PREPARED, record.brief, None)
    assert after.review_until == record.review_until
    assert unwoken(record.target_id)


def test_discard_archives_the_draft_and_fails_the_record():
    source, record = waiting_review()
    draft = target_of(record)
    operations.act("discard", source.pk)
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert "discarded at review" in record.error
    draft.refresh_from_db()
    assert draft.archived is True
    with pytest.raises(NoReviewWaiting):
        operations.act("commit", source.pk)


def test_a_waiting_review_survives_a_restart_and_recovery_then_commits():
    source, record = waiting_review()
    # A restart: nothing but the database is left; recovery runs at start-up, an hour later.
    assert recovery.recover(timezone.now() + timedelta(hours=1)) == []
    assert waiting_id(source) == record.pk
    operations.commit_review(source.pk, EDITED)
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.STARTED


def test_hand_off_now_while_a_review_waits_is_refused_and_leaves_no_request():
    source, record = waiting_review()
    for ask in (operations.request_now, lambda pk: operations.run_attempt(pk, manual=True)):
        with pytest.raises(ReviewWaiting):
            ask(source.pk)
    assert operations.status(source.pk)["requested"] is False
    operations.discard_review(source.pk)
    session_idle.send(sender=Session, session=source)
    assert HandoffRecord.objects.filter(source=source).count() == 1


def test_an_automatic_attempt_while_a_review_waits_is_refused_and_leaves_it_waiting():
    source, record = waiting_review()
    services.settings_store().save(auto_handoff=True)
    store.update_main_state(source.pk, enabled=True, last_attempt_seq=None)
    outcome = attempts.run(source.pk, manual=False)
    assert outcome.outcome is Outcome.REFUSED and "already in progress" in outcome.detail
    assert waiting_id(source) == record.pk


def test_a_review_past_its_time_is_discarded_by_recovery_and_says_so(settings):
    settings.HANDOFF_REVIEW_TIMEOUT = 3600
    source, record = waiting_review()
    draft = target_of(record)
    done = recovery.recover(timezone.now() + timedelta(hours=2))
    assert [(d.record, d.after) for d in done] == [(str(record.pk), Phase.FAILED)]
    record.refresh_from_db()
    assert record.phase == Phase.FAILED and "the review expired" in record.error
    draft.refresh_from_db()
    assert draft.archived is True
    with pytest.raises(NoReviewWaiting):
        operations.commit_review(source.pk, EDITED)


def test_commit_after_the_review_expired_discards_it_instead(settings):
    source, record = waiting_review()
    HandoffRecord.objects.filter(pk=record.pk).update(
        review_until=timezone.now() - timedelta(seconds=1)
    )
    with pytest.raises(NoReviewWaiting):
        operations.commit_review(source.pk, EDITED)
    record.refresh_from_db()
    assert record.phase == Phase.FAILED and "the review expired" in record.error


def test_a_crash_after_the_brief_was_stored_leaves_a_record_recovery_fails(monkeypatch):
    source, record = waiting_review()

    def crash(*args: Any, **kwargs: Any) -> None:
        raise SystemExit("killed")

    monkeypatch.setattr("handoff.attempt.commit_review", crash)
    with pytest.raises(SystemExit):
        operations.commit_review(source.pk, EDITED)
    monkeypatch.undo()
    stored = HandoffRecord.objects.get(pk=record.pk)
    assert (stored.phase, stored.brief, stored.review_until) == (Phase.PREPARED, EDITED, None)
    done = recovery.recover(timezone.now() + timedelta(minutes=5))
    assert [d.after for d in done] == [Phase.FAILED]
    assert operations.status(source.pk)["requested"] is False


def test_api_commits_an_edited_brief_and_refuses_a_bad_one(client: Client):
    source, record = waiting_review()
    client.force_login(source.owner)
    url = f"/api/sessions/{source.pk}/handoff"
    bad = client.post(
        url, {"action": "commit", "brief": {"goal": ""}}, content_type="application/json"
    )
    assert bad.status_code == 422 and "edited brief is refused" in bad.json()["detail"]
    shown = client.post(url, {"action": "review"}, content_type="application/json").json()
    assert shown["last"]["phase"] == "prepared" and shown["last"]["brief"] == record.brief
    done = client.post(url, {"action": "commit", "brief": EDITED}, content_type="application/json")
    assert done.status_code == 200, done.content
    assert done.json()["redirect"] == str(record.target_id)
    assert "reviewed" in seed_text(target_of(HandoffRecord.objects.get(pk=record.pk)))


@pytest.mark.parametrize(
    ("brief", "refusal"),
    [
        ({**EDITED, "goal": "Ship\x00"}, "goal holds a NUL character (\\x00)"),
        ({**EDITED, "decisions": ["Keep", "Stream \ud800"]}, "decisions[1] holds a lone surrogate"),
        ({**EDITED, "next_steps": ["\udfff"]}, "next_steps[0] holds a lone surrogate"),
    ],
)
def test_api_refuses_a_brief_the_database_cannot_store_naming_the_field(
    client: Client, brief: dict[str, Any], refusal: str
):
    source, record = waiting_review()
    client.force_login(source.owner)
    url = f"/api/sessions/{source.pk}/handoff"
    payload = {"action": "commit", "brief": brief}
    refused = client.post(url, payload, content_type="application/json")
    assert refused.status_code == 422, refused.content
    assert refusal in refused.json()["detail"]
    after = HandoffRecord.objects.get(pk=record.pk)
    assert (after.phase, after.brief, after.original_brief) == (Phase.PREPARED, record.brief, None)
    assert after.review_until == record.review_until
    assert unwoken(record.target_id)


def test_now_wait_prints_the_record_waiting_for_review():
    source = make_source()
    operations.review_on(source.pk)
    out = StringIO()
    call_command("handoff", "now", str(source.pk), "--wait", stdout=out)
    assert "review       waiting until " in out.getvalue()
    assert f"handoff commit|discard {source.pk}" in out.getvalue()


def test_management_command_shows_commits_and_discards_reviews(tmp_path):
    source, record = waiting_review()
    out = StringIO()
    call_command("handoff", "review", str(source.pk), "--json", stdout=out)
    assert json.loads(out.getvalue())["last"]["review_until"]
    out = StringIO()
    call_command("handoff", "status", str(source.pk), stdout=out)
    assert "review       on · a handoff waits for review until" in out.getvalue()
    assert "(read its brief, then commit or discard it)" in out.getvalue()
    brief_file = tmp_path / "brief.json"
    brief_file.write_text(json.dumps(EDITED))
    call_command("handoff", "commit", str(source.pk), "--brief", str(brief_file), stdout=StringIO())
    assert HandoffRecord.objects.get(pk=record.pk).brief == EDITED
    other, second = waiting_review(title="Another task")
    call_command("handoff", "discard", str(other.pk), stdout=StringIO())
    assert HandoffRecord.objects.get(pk=second.pk).phase == Phase.FAILED


def test_management_command_review_prints_the_brief_to_edit_and_commit(tmp_path):
    source, record = waiting_review()
    out = StringIO()
    call_command("handoff", "review", str(source.pk), stdout=out)

    shown = out.getvalue()
    assert f"handoff commit {source.pk} --brief FILE" in shown
    brief = json.loads(shown[shown.index("\n{") :])
    assert brief == record.brief
    brief_file = tmp_path / "brief.json"
    brief_file.write_text(json.dumps(brief | {"goal": "Reviewed on the command line"}))
    call_command("handoff", "commit", str(source.pk), "--brief", str(brief_file), stdout=StringIO())
    committed = HandoffRecord.objects.get(pk=record.pk).brief
    assert committed is not None and committed["goal"] == "Reviewed on the command line"


def compose(client: Client, session: Session, text: str) -> str:
    response = client.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": text, "client_id": text},
        headers={"HX-Request": "true"},
    )
    return response.content.decode()


def test_the_composer_shows_commits_and_refuses_reviews(client: Client):
    source, record = waiting_review()
    client.force_login(source.owner)
    assert "A handoff is ready for review" in compose(client, source, "/handoff review")
    assert "Handoff committed" in compose(client, source, "/handoff commit")
    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.STARTED
    other = make_source(title="Another task")
    client.force_login(other.owner)
    assert "is waiting for review" in compose(client, other, "/handoff discard")


def test_a_discard_reads_discarded_at_review_without_ids_in_the_panel_status_and_cli(
    client: Client,
):
    source, record = waiting_review()
    draft_id = str(record.target_id)
    client.force_login(source.owner)
    panel = client.post(reverse("handoff_web:review", args=[source.pk]), {"op": "discard"})
    status = compose(client, source, "/handoff status")
    out = StringIO()
    call_command("handoff", "status", str(source.pk), stdout=out)

    assert HandoffRecord.objects.get(pk=record.pk).phase == Phase.FAILED
    for shown in (panel.content.decode(), status, out.getvalue()):
        assert "Discarded at review" in shown
        assert draft_id not in shown and draft_id[:8] not in shown
    assert "Failed" not in panel.content.decode()
