"""The hook route's answers (the hook contract): authentication, refusals, idempotency, the
acknowledgement, the status line; and the failure table's rows recovery applies to a terminal
handoff (docs/spec.md, Failure outcomes; Recovery)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from hook_scenarios import (
    PROMPT,
    SOURCE,
    SUCCESSOR,
    clear,
    fixture,
    prepared,
    session_of,
    switched_on,
)

from agent_hooks import claim
from agent_hooks.models import Delivery
from handoff import operations, recovery
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, Redirect
from host.models import Session

pytestmark = pytest.mark.django_db


def post(client: Client, path: str, body: object, **headers: Any) -> Any:
    """POST ``body`` as JSON; return the response."""
    return client.post(path, body, content_type="application/json", **headers)


def test_without_a_token_the_route_answers_401_and_stores_nothing(claude):
    response = post(
        Client(),
        "/api/hooks/claude",
        fixture("claude", "stop"),
        HTTP_X_HOOK_DELIVERY=str(uuid.uuid4()),
    )
    assert response.status_code == 401
    assert not Delivery.objects.exists()


@pytest.mark.parametrize(
    "runtime, body, detail",
    [
        ("gemini", {"hook_event_name": "Stop", "session_id": "x"}, "runtime: Input should be"),
        ("claude", {"hook_event_name": "Stop"}, "session_id: Field required"),
        ("codex", {"session_id": "x"}, "hook_event_name: Field required"),
    ],
)
def test_a_bad_delivery_is_refused_422_and_changes_nothing(claude, runtime, body, detail):
    response = post(
        claude.client, f"/api/hooks/{runtime}", body, HTTP_X_HOOK_DELIVERY=str(uuid.uuid4())
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert not Delivery.objects.exists()


@pytest.mark.parametrize(
    "body, detail",
    [
        ({"hook_event_name": "Stop", "session_id": "a\x00b"}, "session_id: a NUL character"),
        ({"hook_event_name": "Stop\x00", "session_id": "x"}, "hook_event_name: a NUL character"),
        ({"hook_event_name": "E" * 41, "session_id": "x"}, "hook_event_name: at most 40"),
    ],
)
def test_an_identity_the_database_cannot_store_is_refused_422(claude, body, detail):
    """A session id or event name with a NUL character, or an event name longer than any
    runtime's, is refused naming the field (it used to be a 500 on PostgreSQL)."""
    response = post(
        claude.client, "/api/hooks/claude", body, HTTP_X_HOOK_DELIVERY=str(uuid.uuid4())
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert not Delivery.objects.exists()


def test_a_transcript_path_with_a_nul_character_is_not_read(claude):
    """A ``transcript_path`` with a NUL character names no file: nothing is read, the answer
    is the usual one (it used to be a 500)."""
    body = fixture("claude", "stop") | {"transcript_path": "/home/user/.claude/a\x00.jsonl"}
    response = post(
        claude.client, "/api/hooks/claude", body, HTTP_X_HOOK_DELIVERY=str(uuid.uuid4())
    )
    assert response.status_code == 200
    assert response.json() == {"output": None, "ack": False}


def test_the_status_line_of_a_session_id_no_session_can_have_is_empty(claude):
    """A status line for a session id with a NUL character names no session: "" (it used to
    be a 500 on PostgreSQL)."""
    line = post(claude.client, "/api/hooks/claude/status-line", {"session_id": "a\x00b"})
    assert line.status_code == 200
    assert line.json() == {"text": ""}


def test_a_clear_in_a_very_deep_folder_still_pairs(claude):
    """A ``cwd`` longer than the stored folder (1 024 characters) is cut alike on every event:
    the ``/clear`` is kept and pairs (it used to be a 500 on PostgreSQL: no pairing)."""
    deep = "/home/user/" + "nested/" * 200
    log, session, record = prepared(claude)
    claude.process = ""  # paired by folder alone
    assert claude.hook("session_end_clear", log, cwd=deep) is None
    output = claude.hook("session_start_clear", claude.log(SUCCESSOR), cwd=deep)
    assert record.pk.hex[:12] in output["hookSpecificOutput"]["additionalContext"]


def test_a_background_shell_id_the_database_cannot_store_still_defers(claude):
    """A running shell whose id carries a NUL character still defers the attempt (it used to
    be a 500 on PostgreSQL)."""
    log = claude.log(SOURCE)
    session = switched_on(claude, log)
    log.turns(2, context=60_000)
    shell = {"id": "b\x00c", "type": "shell", "status": "running"}
    assert claude.hook("stop", log, background_tasks=[shell]) is None
    assert not HandoffRecord.objects.filter(source_id=session.pk).exists()


def test_an_unknown_delivery_cannot_be_acknowledged(claude):
    response = post(claude.client, "/api/hooks/claude/ack", {"delivery": str(uuid.uuid4())})
    assert response.status_code == 404
    response = post(claude.client, "/api/hooks/gemini/ack", {"delivery": str(uuid.uuid4())})
    assert response.status_code == 422


def test_the_status_line_counts_down_then_says_the_brief_is_ready(claude):
    log = claude.log(SOURCE)
    switched_on(claude, log)
    line = post(claude.client, "/api/hooks/claude/status-line", fixture("claude", "status_line"))
    assert line.json() == {"text": "hands off at 50k · 20k to go"}
    log.turns(2, context=60_000)
    claude.hook("stop", log)
    line = post(claude.client, "/api/hooks/claude/status-line", fixture("claude", "status_line"))
    assert line.json() == {"text": "brief ready: /clear"}


def test_a_brief_nobody_claims_expires_as_a_review_does(claude):
    log, session, record = prepared(claude)
    recovery.recover(timezone.now() + timedelta(days=2))
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert record.error.startswith("the review expired")
    _, output = clear(claude, log)
    assert output is None  # the new session starts plain


def test_a_successor_that_never_shows_a_first_turn_is_start_pending(claude):
    log, session, record = prepared(claude)
    clear(claude, log)
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED
    recovery.recover(timezone.now() + timedelta(hours=1))
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED_START_PENDING
    assert Redirect.objects.filter(source_id=session.pk).exists()


def test_a_subagent_started_after_prepared_fails_the_claim(claude):
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    claude.hook("subagent_start", log)
    _, output = clear(claude, log)
    assert output is None
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert "activity:subagent" in record.error
    assert not Redirect.objects.exists()


def test_the_switch_turned_off_after_prepared_fails_the_claim(claude):
    log, session, record = prepared(claude)
    operations.disable(session_of(SOURCE).pk)
    _, output = clear(claude, log)
    assert output is None
    record.refresh_from_db()
    assert record.phase == Phase.FAILED


def test_a_log_outside_the_runtimes_folders_is_not_read(claude, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = claude.log(SOURCE)
    log.path = elsewhere / log.path.name
    log.turns(2, context=30_000)
    assert claude.hook("stop", log) is None
    assert not Session.objects.filter(external_id=SOURCE).exists()


def test_a_crash_after_the_acknowledgement_commits_at_the_successors_next_event(
    claude, monkeypatch
):
    """The acknowledgement is stored before step 8 runs: a crash between them leaves the claim
    acknowledged, and the successor's next event commits it."""
    log, session, record = prepared(claude)
    claude.hook("session_end_clear", log)
    successor = claude.log(SUCCESSOR)

    def crash(choice: object) -> None:
        raise RuntimeError("killed after the acknowledgement")

    monkeypatch.setattr(claim, "_commit", crash)
    with pytest.raises(RuntimeError):
        claude.hook("session_start_clear", successor)
    monkeypatch.undo()
    record.refresh_from_db()
    assert record.phase == Phase.PREPARED
    assert not Redirect.objects.exists()
    claude.hook("user_prompt_submit", successor, prompt="Go on.")
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED
    assert Redirect.objects.filter(source_id=session.pk).exists()


def test_two_clears_in_one_folder_pair_by_the_runtime_process(claude):
    """Two terminals in one folder clear at once: each new session takes its own source's
    brief (the same ``X-Hook-Process``); without a process to tell them apart, none is taken."""
    first_log, first, first_record = prepared(claude)
    claude.process = "7001"
    claude.hook("session_end_clear", first_log)
    claude.process = "7002"
    second_log, second, second_record = prepared(claude, "5d5d5d5d-0000-4000-8000-000000000002")
    claude.hook("session_end_clear", second_log)
    claude.process = ""
    assert claude.hook("session_start_clear", claude.log(SUCCESSOR)) is None
    claude.process = "7002"
    output = claude.hook("session_start_clear", claude.log(SUCCESSOR))
    assert second_record.pk.hex[:12] in output["hookSpecificOutput"]["additionalContext"]
    second_record.refresh_from_db()
    first_record.refresh_from_db()
    assert (second_record.phase, first_record.phase) == (Phase.COMMITTED, Phase.PREPARED)
