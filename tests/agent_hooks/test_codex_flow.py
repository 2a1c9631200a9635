"""A live Codex CLI session handed off through its hooks (Codex CLI 0.145+: no subagent
events), driven by a scripted runtime: (g) the new-terminal path through the marker, and
``/clear`` in place."""

from __future__ import annotations

from typing import Any

import pytest
from handoff_support import auto_handoff
from hook_scenarios import goal_of, session_of

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, Redirect
from host.models import Session

pytestmark = pytest.mark.django_db

SOURCE = "019a6b2c-3d4e-7f50-8a61-b2c3d4e5f607"
SUCCESSOR = "019a6b2c-9e8d-7c6b-8a59-4f3e2d1c0b0a"


def prepared(codex: Any) -> tuple[Any, Session, HandoffRecord, str]:
    log = codex.log(SOURCE)
    log.turns(4, context=30_000)
    assert codex.hook("stop", log) is None
    session = session_of(SOURCE)
    assert session.runtime == "codex"
    operations.enable(session.pk)
    auto_handoff()
    log.turns(2, context=60_000)
    told = codex.hook("stop", log)
    assert told is not None
    told = told["systemMessage"]
    record = HandoffRecord.objects.get(source_id=session.pk)
    assert record.phase == Phase.PREPARED
    assert record.brief is not None
    return log, session, record, told


def test_codex_in_a_new_terminal_claims_by_the_marker(codex):
    log, session, record, told = prepared(codex)
    marker = f"[handoff:{record.pk.hex[:12]}]"
    command = told.split("Or open it in a new terminal: ")[1]
    assert command.startswith("cd /home/user/my-project && codex ")
    assert marker in command
    codex.process = "6262"
    fresh = codex.log(SUCCESSOR)  # Codex writes the rollout's session_meta at start
    assert codex.hook("session_start_startup", fresh) is None
    prompt = f"Continue the handed-off work {marker}: read the brief it names."
    output = codex.hook("user_prompt_submit", fresh, prompt=prompt)
    assert output is not None
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert len(context) <= 2_400 * 4
    assert goal_of(record) in context
    fresh.prompt(prompt)
    fresh.answer("Going on from the brief.", context=11_000)
    assert codex.hook("stop", fresh) is None
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    successor = session_of(SUCCESSOR)
    assert record.target_id == successor.pk
    assert Redirect.objects.get(source_id=session.pk).destination_id == successor.pk


def test_codex_clear_commits_on_the_acknowledgement(codex):
    log, session, record, _ = prepared(codex)
    assert codex.hook("session_end", log) is None  # as Codex sends it: reason "other"
    fresh = codex.log(SUCCESSOR)
    output = codex.hook("session_start_clear", fresh)
    assert output is not None
    assert goal_of(record) in output["hookSpecificOutput"]["additionalContext"]
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED
    fresh.prompt("Go on.")
    fresh.answer("Going on.", context=9_000)
    codex.hook("stop", fresh)
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    assert record.target_id == session_of(SUCCESSOR).pk
