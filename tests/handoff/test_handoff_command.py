"""``manage.py handoff status|enable|disable|now SESSION [--wait] [--json]`` (docs/api.md)."""

from __future__ import annotations

import json
import uuid
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from handoff_support import make_source, make_user
from shared_files import TRANSCRIPTS

from handoff.management.commands.handoff import Command as HandoffCommand
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.shapes import MetricsOut, RecordOut, StatusOut
from host.models import InboxItem, InboxStage, Message, Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db

AUTO_COMPACT = TRANSCRIPTS / "claude-code-2.1-auto-compact.jsonl"

# From the one definition of each shape: a key added there is checked here too.
STATUS_KEYS = set(StatusOut.__annotations__)
RECORD_KEYS = set(RecordOut.__annotations__)


def handoff(*args: str) -> str:
    out = StringIO()
    call_command("handoff", *args, stdout=out)
    return out.getvalue()


def handoff_failing(*args: str) -> tuple[CommandError, str]:
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("handoff", *args, stdout=out)
    return caught.value, out.getvalue()


# --- status, enable, disable ------------------------------------------------------------------


def test_status_json_prints_the_status_report():
    source = make_source(turns=4)

    report = json.loads(handoff("status", str(source.pk), "--json"))

    assert set(report) == STATUS_KEYS
    assert report["session"] == str(source.pk)
    assert report["turns"] == 4
    assert report["tokens"] == {"value": 150_000, "basis": "context", "label": "exact"}
    assert report["last"] is None


def test_status_prints_a_readable_block():
    source = make_source()

    text = handoff("status", str(source.pk))

    assert f"Session {source.pk}" in text
    assert "enabled: no" in text
    assert "150000 (context, exact)" in text
    assert "deferred     none" in text
    assert "last         none" in text


def _from_a_shell(monkeypatch: pytest.MonkeyPatch, capsys: Any, lang: str, *args: str) -> str:
    """The command as ``manage.py`` runs it, in a shell whose ``LANG`` is ``lang``."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", lang)
    monkeypatch.setattr(connections, "close_all", lambda: None)  # the test's own database
    HandoffCommand().run_from_argv(["manage.py", "handoff", *args])
    return str(capsys.readouterr().out)


def test_status_speaks_the_language_the_shell_asks_for(monkeypatch, capsys):
    source = make_source()

    chinese = _from_a_shell(monkeypatch, capsys, "zh_CN.UTF-8", "status", str(source.pk))
    plain = _from_a_shell(monkeypatch, capsys, "C.UTF-8", "status", str(source.pk))

    assert "enabled: no" in plain
    assert "enabled: no" not in chinese and f"{source.pk}" in chinese
    assert any("\u4e00" <= char <= "\u9fff" for char in chinese)


def test_status_says_unavailable_not_zero_tokens_when_nothing_measures():
    session = create_session(make_user("quiet"), title="Empty")

    text = handoff("status", str(session.pk))

    tokens = next(line for line in text.splitlines() if line.startswith("  tokens"))
    assert tokens.split()[1:] == ["unavailable", "(context)"]


def test_enable_and_disable_switch_the_main_and_print_the_status():
    source = make_source()

    enabled = json.loads(handoff("enable", str(source.pk), "--json"))
    assert enabled["enabled"] is True
    assert MainState.objects.get(session=source).enabled is True

    disabled = handoff("disable", str(source.pk))
    assert "enabled: no" in disabled
    assert MainState.objects.get(session=source).enabled is False


# --- naming the session -----------------------------------------------------------------------


def test_a_unique_prefix_of_six_characters_names_the_session():
    source = make_source()

    report = json.loads(handoff("status", str(source.pk)[:6], "--json"))

    assert report["session"] == str(source.pk)


def test_a_prefix_with_dashes_and_capitals_names_the_session():
    source = make_source()

    report = json.loads(handoff("status", str(source.pk)[:13].upper(), "--json"))

    assert report["session"] == str(source.pk)


def test_a_prefix_shorter_than_six_characters_is_refused():
    source = make_source()

    error, _ = handoff_failing("status", str(source.pk)[:5])

    assert "at least 6" in str(error)


def test_an_ambiguous_prefix_is_refused_naming_the_candidates():
    owner = make_user()
    first = Session.objects.create(
        owner=owner, id=uuid.UUID("abcdef01-0000-4000-8000-000000000001")
    )
    second = Session.objects.create(
        owner=owner, id=uuid.UUID("abcdef02-0000-4000-8000-000000000002")
    )

    error, _ = handoff_failing("enable", "abcdef")

    assert "matches several sessions" in str(error)
    assert str(first.pk) in str(error) and str(second.pk) in str(error)
    assert not MainState.objects.exists()


def test_an_unknown_session_is_refused():
    make_source()

    error, _ = handoff_failing("status", "ffffffffff")

    assert "No session id starts with 'ffffffffff'" in str(error)


def test_an_unknown_action_lists_the_actions_by_name():
    error, _ = handoff_failing("sideways", "abcdef")
    assert "choose from 'enable', 'disable', 'now', 'status'" in str(error)
    assert "Action." not in str(error)


def test_wait_applies_to_now_only():
    source = make_source()

    error, _ = handoff_failing("enable", str(source.pk), "--wait")

    assert "--wait applies to 'now' only" in str(error)
    assert not MainState.objects.filter(enabled=True).exists()


def test_a_subagent_is_refused_with_the_reason_and_nothing_changes():
    source = make_source()
    subagent = Session.objects.create(owner=source.owner, parent=source, title="helper")

    error, _ = handoff_failing("now", str(subagent.pk), "--wait")

    assert "subagent" in str(error)
    assert not HandoffRecord.objects.exists()
    assert not MainState.objects.filter(session=subagent).exists()


# --- now ----------------------------------------------------------------------------------------


def test_now_without_wait_requests_the_attempt_and_prints_the_status():
    source = make_source()

    report = json.loads(handoff("now", str(source.pk), "--json"))

    assert report["requested"] is True
    assert MainState.objects.get(session=source).requested is True
    assert not HandoffRecord.objects.exists()


def test_now_wait_runs_the_attempt_and_prints_the_started_record():
    source = make_source()

    record = json.loads(handoff("now", str(source.pk), "--wait", "--json"))

    assert set(record) == RECORD_KEYS
    assert record["phase"] == "started"
    assert record["reason"] == "manual"
    assert record["source"] == str(source.pk)
    assert set(record["metrics"]) == set(MetricsOut.__annotations__)
    assert record["brief"]["goal"]
    assert Redirect.objects.get(source=source).destination_id == uuid.UUID(record["target"])


def test_now_wait_prints_a_readable_record():
    source = make_source()

    text = handoff("now", str(source.pk), "--wait")

    assert "started (manual)" in text
    assert f"source       {source.pk}" in text
    assert "150000 tokens · 5 turns" in text
    assert "inheritance  cwd: inherited (/work/demo)" in text


def test_now_wait_deferred_exits_non_zero_printing_the_blockers():
    source = make_source()
    InboxItem.objects.create(session=source, stage=InboxStage.NEXT_TURN, content="later")

    error, out = handoff_failing("now", str(source.pk), "--wait", "--json")

    assert error.returncode == 2
    assert "pending-inbox" in str(error)
    report = json.loads(out)
    assert report["deferred"] == ["pending-inbox"]
    assert not HandoffRecord.objects.exists()
    assert not Redirect.objects.exists()


def test_now_wait_failed_exits_non_zero_printing_the_record(settings: Any):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": None}
    source = make_source()
    messages_before = Message.objects.filter(session=source).count()

    error, out = handoff_failing("now", str(source.pk), "--wait", "--json")

    assert error.returncode == 1
    record = json.loads(out)
    assert record["phase"] == "failed"
    assert record["error"]
    assert record["target"] is None
    assert not Redirect.objects.exists()
    assert Message.objects.filter(session=source).count() == messages_before


def test_now_wait_on_a_handed_off_source_is_refused():
    source = make_source()
    handoff("now", str(source.pk), "--wait")

    error, _ = handoff_failing("now", str(source.pk), "--wait")

    assert "handoff now:" in str(error)
    assert HandoffRecord.objects.count() == 1


# --- the real transcript, end to end ----------------------------------------------------------


def test_an_imported_transcript_is_handed_off_and_started():
    if not AUTO_COMPACT.exists():
        pytest.skip(f"shared transcript not found at {AUTO_COMPACT} (../shared/transcripts)")
    imported = StringIO()
    call_command("import_transcript", str(AUTO_COMPACT), "--json", stdout=imported)
    session_id = json.loads(imported.getvalue().splitlines()[0])["session"]
    source = Session.objects.get(pk=session_id)

    record = json.loads(handoff("now", session_id, "--wait", "--json"))

    assert record["phase"] == "started"
    successor = Session.objects.get(pk=record["target"])
    assert (successor.cwd, successor.workspace_id, successor.model) == (
        source.cwd,
        source.workspace_id,
        source.model,
    )
    first = Message.objects.filter(session=successor).order_by("seq").first()
    assert first is not None
    assert record["brief"]["goal"] in first.content
    assert any(path.startswith("/") for path in record["brief"]["artifacts"])
    status = json.loads(handoff("status", session_id, "--json"))
    assert status["redirect"] == record["target"]
    assert status["last"]["id"] == record["id"]
