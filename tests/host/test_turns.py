"""Turns count the agent's work (docs/design.md, Turns).

``handoffMinTurns`` (docs/spec.md, Trigger) counts every input the agent answers, so a long agentic
session with one or two typed prompts is not kept from handing off by its prompt count.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from shared_files import SAMPLES, TRANSCRIPTS

from handoff import metrics
from handoff.core.phases import Reason
from handoff.core.trigger import handoff_trigger
from handoff.settings_store import SettingsValues
from host.models import Message, Session

pytestmark = pytest.mark.django_db

ROLLOUT = TRANSCRIPTS


def test_a_sample_agentic_session_with_two_prompts_hands_off_on_context_pressure() -> None:
    call_command(
        "import_transcript",
        str(SAMPLES / "claude-code-2.x-epic.jsonl"),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    session = Session.objects.get(parent=None)
    values = SettingsValues(context_windows={session.model: 32_000})  # the offline agent's

    measured, _ = metrics.measure(session, values)

    prompts = Message.objects.filter(session=session, role="user", starts_turn=True).count()
    assert prompts == 2 < values.handoff_min_turns <= measured.turns == 32  # samples/README.md
    assert measured.tokens == 27_809 > 0.75 * measured.capacity
    assert handoff_trigger(measured, values.trigger_config()) == Reason.CONTEXT_PRESSURE


def test_a_long_agentic_session_with_two_prompts_hands_off_on_context_pressure() -> None:
    path = ROLLOUT / "codex-0.125-rollout.jsonl"
    if not path.is_file():
        pytest.skip(f"shared transcripts not found at {ROLLOUT.resolve()} ({path.name})")
    call_command("import_transcript", str(path), stdout=StringIO(), stderr=StringIO())
    session = Session.objects.get(parent=None)
    values = SettingsValues()

    measured, _ = metrics.measure(session, values)

    prompts = Message.objects.filter(session=session, role="user", starts_turn=True).count()
    assert prompts == 2 < values.handoff_min_turns <= measured.turns
    assert measured.tokens == 131_573
    assert handoff_trigger(measured, values.trigger_config()) == Reason.CONTEXT_PRESSURE
