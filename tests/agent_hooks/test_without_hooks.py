"""A followed Claude Code session WITHOUT the product's hooks, handed off through the
new-terminal command: the user asks on its page (``now``), the brief waits ``prepared``, the
page gives the command, and the follower's import of the new log whose first user record
carries the marker claims the record (re-checks, flush on the marker's evidence, route), then
``started`` at its first turn. Only ``follow_sessions``' step (``follow_step``) runs: no hook
is posted."""

from __future__ import annotations

import html
import shlex
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation
from handoff_support import auto_handoff
from hook_scenarios import SOURCE, goal_of, session_of

from agent_hooks.models import Choice
from handoff import operations
from handoff.core.phases import Phase
from handoff.core.terminal import successor_session_id
from handoff.models import HandoffRecord, MainState, Redirect
from host.importers.live import follow_step

pytestmark = pytest.mark.django_db


def followed(claude: Any, owner: Any, key: str = SOURCE) -> Any:
    """A session past its threshold in a log the follower reads, with no hook ever run."""
    log = claude.log(key)
    log.turns(6, context=60_000)
    follow_step(log.path, owner, settle=True)
    return log


def asked_now(claude: Any, owner: Any) -> tuple[Any, Any, HandoffRecord, str]:
    """``now`` on the session's page: the brief waits; return the page's command."""
    log = followed(claude, owner)
    session = session_of(SOURCE)
    assert session.hooks_seen is None
    claude.client.force_login(owner)
    asked = claude.client.post(f"/handoff/sessions/{session.pk}/now/", HTTP_HX_REQUEST="true")
    assert asked.status_code == 200, asked.content
    record = HandoffRecord.objects.get(source_id=session.pk)
    assert record.phase == Phase.PREPARED
    page = claude.client.get(f"/handoff/sessions/{session.pk}/review/").content.decode()
    command = next(line for line in page.splitlines() if "claude --session-id" in line)
    return log, session, record, command


def successor_prompt(command: str) -> str:
    """The prompt the page's command gives Claude Code (HTML-unescaped, shell-split)."""
    words = shlex.split(html.unescape(command.split("<code>")[1].split("</code>")[0]))
    return words[-1]


def test_now_without_hooks_commits_when_the_marker_is_in_the_new_log(claude, hooked_user):
    log, session, record, command = asked_now(claude, hooked_user)
    assert f"claude --session-id {successor_session_id(record.pk)}" in command
    prompt = successor_prompt(command)
    assert f"[handoff:{record.pk.hex[:12]}]" in prompt
    brief = prompt.split("read the brief in ")[1].rstrip(".")
    assert goal_of(record) in Path(brief).read_text()  # the successor reads the brief there
    fresh = claude.log(successor_session_id(record.pk))
    fresh.prompt(prompt)
    follow_step(fresh.path, hooked_user, settle=True)
    record.refresh_from_db()
    successor = session_of(fresh.session_id)
    assert record.phase == Phase.COMMITTED, (record.phase, record.error)  # no answer yet
    assert record.target_id == successor.pk
    assert Redirect.objects.get(source_id=session.pk).destination_id == successor.pk
    fresh.answer("Going on from the brief.", context=12_000)
    follow_step(fresh.path, hooked_user, settle=True)
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    page = claude.client.get(f"/handoff/sessions/{session.pk}/panel/").content.decode()
    assert "This conversation continues in" in page  # the old page names its successor
    assert f'href="/s/{successor.pk}/"' in page


def test_an_automatic_attempt_without_hooks_is_refused(claude, hooked_user):
    followed(claude, hooked_user)
    session = session_of(SOURCE)
    MainState.objects.update_or_create(session=session, defaults={"enabled": True})
    auto_handoff()
    outcome = operations.run_attempt(session.pk, manual=False)
    assert outcome.outcome == "refused"
    assert "only when asked" in outcome.detail
    assert not HandoffRecord.objects.exists()


def test_a_marker_for_a_record_no_longer_stable_fails_it(claude, hooked_user):
    log, session, record, command = asked_now(claude, hooked_user)
    log.prompt("One more thing in the old terminal.")  # a prompt since prepared
    log.answer("Done.", context=61_000)
    follow_step(log.path, hooked_user, settle=True)
    fresh = claude.log(successor_session_id(record.pk))
    fresh.prompt(successor_prompt(command))
    follow_step(fresh.path, hooked_user, settle=True)
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert "not stable" in record.error
    assert not Redirect.objects.exists()
    assert session_of(fresh.session_id).pk != record.target_id  # it stays a plain session


def test_unknown_and_foreign_markers_claim_nothing(claude, hooked_user, django_user_model):
    log, session, record, command = asked_now(claude, hooked_user)
    stranger = django_user_model.objects.create_user("stranger")
    theirs = claude.log("5e6f7a8b-0000-4000-8000-000000000001")
    theirs.prompt(successor_prompt(command))  # another user's log names this user's record
    follow_step(theirs.path, stranger, settle=True)
    unknown = claude.log("5e6f7a8b-0000-4000-8000-000000000002")
    unknown.prompt("Continue the handed-off work [handoff:0123456789ab]: read the brief.")
    follow_step(unknown.path, hooked_user, settle=True)
    record.refresh_from_db()
    assert record.phase == Phase.PREPARED
    assert not Choice.objects.exclude(successor_key="").exists()
    assert not Redirect.objects.exists()


def test_handoff_now_in_the_composer_prepares_the_brief(claude, hooked_user):
    followed(claude, hooked_user)
    session = session_of(SOURCE)
    claude.client.force_login(hooked_user)
    answer = claude.client.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": "/handoff now", "client_id": "c1"},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 200, answer.content
    assert HandoffRecord.objects.get(source_id=session.pk).phase == Phase.PREPARED


@pytest.mark.parametrize(
    ("language", "asks", "form_says"),
    [
        (
            "en",
            "open the successor in a new terminal with its command, or discard it",
            "without the product's hooks",
        ),
        ("zh-hans", "用它的命令在新终端中打开后继会话，或丢弃它", "没有运行本产品的钩子"),
    ],
)
def test_the_page_of_a_hookless_session_asks_for_the_new_terminal_not_clear(
    claude, hooked_user, language, asks, form_says
):
    _, session, record, _ = asked_now(claude, hooked_user)
    page = claude.client.get(f"/s/{session.pk}/", headers={"Accept-Language": language})
    text = html.unescape(page.content.decode())
    notice = text.split('id="review-notice"')[1].split("</p>")[0]
    assert asks in notice
    assert "/clear" not in text
    assert form_says in text
    assert "commit or discard" not in text and "提交或丢弃" not in text
    assert f"claude --session-id {successor_session_id(record.pk)}" in text


@pytest.mark.parametrize(
    ("language", "asks"),
    [
        ("en", "open the successor in a new terminal with its command, or discard it"),
        ("zh-hans", "用它的命令在新终端中打开后继会话，或丢弃它"),
    ],
)
def test_the_status_command_of_a_hookless_session_asks_what_its_page_asks(
    claude, hooked_user, language, asks
):
    _, session, _, _ = asked_now(claude, hooked_user)
    out = StringIO()
    with translation.override(language):
        call_command("handoff", "status", str(session.pk), stdout=out)
    shown = out.getvalue()
    assert asks in shown
    assert "commit or discard" not in shown and "提交或丢弃" not in shown


def test_now_wait_on_a_hookless_session_prints_the_new_terminal_way_not_commit(claude, hooked_user):
    followed(claude, hooked_user)
    session = session_of(SOURCE)
    out = StringIO()
    call_command("handoff", "now", str(session.pk), "--wait", stdout=out)
    shown = out.getvalue()
    assert HandoffRecord.objects.get(source_id=session.pk).phase == Phase.PREPARED
    assert "open the successor in a new terminal with its command, or discard it" in shown
    assert "handoff commit" not in shown


def test_review_on_a_hookless_session_prints_the_brief_without_a_commit_to_run(claude, hooked_user):
    _, session, record, _ = asked_now(claude, hooked_user)
    out = StringIO()
    call_command("handoff", "review", str(session.pk), stdout=out)
    shown = out.getvalue()
    assert goal_of(record) in shown
    assert "open the successor in a new terminal with its command, or discard it" in shown
    assert "handoff commit" not in shown
