"""A live Claude Code session handed off through its hooks, driven by a scripted runtime: the
documented payloads posted to the route while real-shaped lines are appended to the logs.

(a) Stop past the threshold with both switches on → prepared; the next prompt is blocked once
with the choice; (b) ``/clear`` → the new session's added context holds the brief and the
carried-over prompt, the record commits on the acknowledgement and starts with the first turn;
(c) a prompt sent again declines; (d) a late answer installs no route; (e) forwarding;
(f) a subagent defers.
"""

from __future__ import annotations

import html
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation
from hook_scenarios import (
    PROMPT,
    SOURCE,
    SUCCESSOR,
    clear,
    goal_of,
    prepared,
    session_of,
    switched_on,
)

from agent_hooks.models import Choice, Delivery
from follower.models import FollowerEvent
from handoff import export, operations, store
from handoff.core.phases import Phase
from handoff.core.terminal import successor_session_id
from handoff.models import HandoffRecord, MainState, Redirect
from host.models import Message, Session

pytestmark = pytest.mark.django_db


def test_stop_past_the_threshold_prepares_and_the_next_prompt_is_blocked_once(claude):
    log, session, record = prepared(claude)
    blocked = claude.hook("user_prompt_submit", log, prompt=PROMPT)
    assert blocked["decision"] == "block"
    assert "/clear to continue in a fresh session" in blocked["reason"]
    assert Choice.objects.get(record=record).blocked_prompt == PROMPT
    record.refresh_from_db()
    assert record.phase == Phase.PREPARED
    assert claude.hook("stop", log) is None  # told once


def test_a_prompt_sent_again_declines_and_waits_the_backoff(claude):
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    assert claude.hook("user_prompt_submit", log, prompt=PROMPT) is None
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert record.error.startswith("declined")
    state = MainState.objects.get(session_id=session.pk)
    assert state.retry_at is not None  # automatic attempts wait the backoff
    log.turns(1, context=62_000)
    assert claude.hook("stop", log) is None
    assert HandoffRecord.objects.count() == 1


def test_clear_seeds_the_new_session_and_commits_on_the_acknowledgement(claude):
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    successor_log, output = clear(claude, log)
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert len(context) <= 8_000
    assert goal_of(record) in context
    assert f"[handoff:{record.pk.hex[:12]}]" in context
    assert PROMPT in context  # the blocked prompt is carried over
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED
    redirect = Redirect.objects.get(source_id=session.pk)
    assert str(redirect.destination_id) == str(record.target_id)
    # Every open tab on the old conversation moves: the owner's follower gets the redirect.
    moved = FollowerEvent.objects.get(user=session.owner, kind="redirect.committed").payload
    assert (moved["source"], moved["destination"]) == (str(session.pk), str(record.target_id))
    # The successor's first turn, in its log, starts it.
    successor_log.prompt("Go on.")
    successor_log.answer("Going on with the --json option.", context=9_000)
    assert claude.hook("stop", successor_log) is None
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    successor = session_of(SUCCESSOR)
    assert successor.pk == record.target_id
    assert successor.runtime == "claude"
    assert Message.objects.filter(session=successor, content="Go on.").exists()


def test_a_late_answer_installs_no_route(claude):
    log, session, record = prepared(claude)
    successor_log, printed = clear(claude, log, late=True)
    assert printed is None
    assert not Redirect.objects.exists()
    successor_log.prompt("Hello again.")
    assert claude.hook("user_prompt_submit", successor_log, prompt="Hello again.") is None
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert record.error.startswith("seed flush failed")
    assert not Redirect.objects.exists()
    successor_log.answer("Hello.", context=5_000)
    claude.hook("stop", successor_log)
    plain = session_of(SUCCESSOR)
    assert plain.pk != record.target_id  # the new session stays plain
    assert store.redirect_of(session.pk) is None


def test_a_retried_delivery_gets_the_same_answer_and_does_nothing_twice(claude):
    log, session, record = prepared(claude)
    first = claude.post("user_prompt_submit", log, prompt=PROMPT)
    again = claude.post("user_prompt_submit", log, delivery=claude.sent[-1], prompt=PROMPT)
    assert again == first
    record.refresh_from_db()
    assert record.phase == Phase.PREPARED  # not declined by the retry
    assert Delivery.objects.filter(pk=claude.sent[-1]).count() == 1


def test_prompts_to_the_old_session_are_blocked_and_reach_the_successor_once(claude):
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    successor_log, _ = clear(claude, log)
    forwarded = claude.post("user_prompt_submit", log, prompt="Also update the README.")
    retried = claude.post(
        "user_prompt_submit", log, delivery=claude.sent[-1], prompt="Also update the README."
    )
    assert forwarded == retried
    assert forwarded["output"]["decision"] == "block"
    assert "handed off to" in forwarded["output"]["reason"]
    assert f"claude --resume {SUCCESSOR}" in forwarded["output"]["reason"]
    assert Message.objects.filter(session=session, content="Also update the README.").count() == 1
    carried = claude.hook("user_prompt_submit", successor_log, prompt="Go on.")
    assert "Also update the README." in carried["hookSpecificOutput"]["additionalContext"]
    assert claude.hook("user_prompt_submit", successor_log, prompt="And then?") is None


def test_an_empty_prompt_to_the_old_session_is_not_said_to_be_kept(claude):
    log, session, _ = prepared(claude)
    clear(claude, log)
    forwarded = claude.hook("user_prompt_submit", log, prompt="")
    assert forwarded["decision"] == "block"
    assert "handed off to" in forwarded["reason"]
    assert "kept" not in forwarded["reason"]
    assert not Message.objects.filter(session=session, content="").exists()


@pytest.mark.parametrize("odd", ["\ud83d", "\x00"])
def test_a_prompt_with_text_the_database_cannot_store_is_blocked_and_forwarded(claude, odd):
    """A prompt carrying a lone surrogate (half of a pasted emoji) or a NUL character is
    blocked with the choice and forwarded as any prompt is, that character stored as U+FFFD
    (it used to be a 500: the hook printed nothing and the prompt went into the old session)."""
    log, session, record = prepared(claude)
    blocked = claude.hook("user_prompt_submit", log, prompt=f"Fix it {odd} now.")
    assert blocked["decision"] == "block"
    assert Choice.objects.get(record=record).blocked_prompt == "Fix it \ufffd now."
    successor_log, _ = clear(claude, log)
    forwarded = claude.hook("user_prompt_submit", log, prompt=f"Also {odd} this.")
    assert forwarded["decision"] == "block"
    assert Message.objects.filter(session=session, content="Also \ufffd this.").exists()
    carried = claude.hook("user_prompt_submit", successor_log, prompt="Go on.")
    assert "Also \ufffd this." in carried["hookSpecificOutput"]["additionalContext"]


def test_the_marker_typed_into_the_session_it_hands_off_is_blocked_and_claims_nothing(claude):
    """The new-terminal prompt pasted into the old session itself: it is blocked saying where
    it belongs, and the brief still waits for ``/clear`` (it used to be claimed by the old
    session, its brief added to the nearly full context, and then claimable by nothing)."""
    log, session, record = prepared(claude)
    marker = f"[handoff:{record.pk.hex[:12]}]"
    output = claude.hook("user_prompt_submit", log, prompt=f"Continue the work {marker}.")
    assert output["decision"] == "block"
    assert "new terminal" in output["reason"]
    assert "/clear" in output["reason"]
    assert Choice.objects.get(record=record).successor_key == ""
    _, started = clear(claude, log)
    assert goal_of(record) in started["hookSpecificOutput"]["additionalContext"]
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED


def test_the_marker_typed_into_another_session_with_a_history_claims_nothing(claude):
    """Pasted into another session that has a conversation of its own, the marker's prompt is
    blocked as well: that session's first prompt can never be the marker, so the claim could
    never commit and would hold the brief until it expired."""
    log, session, record = prepared(claude)
    other = claude.log("5d5d5d5d-0000-4000-8000-000000000009")
    other.turns(2, context=20_000)
    claude.hook("stop", other)
    marker = f"[handoff:{record.pk.hex[:12]}]"
    output = claude.hook("user_prompt_submit", other, prompt=f"Continue the work {marker}.")
    assert output["decision"] == "block"
    assert Choice.objects.get(record=record).successor_key == ""


def test_a_running_subagent_defers(claude):
    log = claude.log(SOURCE)
    session = switched_on(claude, log)
    claude.hook("subagent_start", log)
    log.turns(2, context=60_000)
    assert claude.hook("stop", log) is None
    assert not HandoffRecord.objects.exists()
    assert MainState.objects.get(session_id=session.pk).deferred == ["activity:subagent"]
    claude.hook("subagent_stop", log)
    told = claude.hook("stop", log)
    assert "/clear" in told["systemMessage"]
    assert HandoffRecord.objects.get().phase == Phase.PREPARED


def test_a_background_shell_defers(claude):
    log = claude.log(SOURCE)
    session = switched_on(claude, log)
    log.turns(2, context=60_000)
    assert claude.hook("stop_background_shell", log) is None
    assert MainState.objects.get(session_id=session.pk).deferred == ["activity:job"]
    assert "/clear" in claude.hook("stop", log)["systemMessage"]


def test_compaction_events_catch_up_and_never_block(claude):
    log = claude.log(SOURCE)
    log.turns(2, context=30_000)
    assert claude.hook("pre_compact", log) is None
    assert session_of(SOURCE).turns == 2
    assert claude.hook("post_compact", log) is None


def test_claude_in_a_new_terminal_claims_by_the_marker(claude):
    """The Stop message's command: a new session whose first prompt carries the marker."""
    log, session, record = prepared(claude)
    told = Choice.objects.get(record=record)
    assert told.told is not None
    claude.process = "5151"  # another terminal
    fresh = claude.log("0c0c0c0c-1111-4222-8333-444455556666")
    assert claude.hook("session_start_startup", fresh) is None
    prompt = f"Continue the handed-off work [handoff:{record.pk.hex[:12]}]: read the brief."
    context = claude.hook("user_prompt_submit", fresh, prompt=prompt)
    assert goal_of(record) in context["hookSpecificOutput"]["additionalContext"]
    record.refresh_from_db()
    assert record.phase == Phase.PREPARED  # no evidence in the log yet
    fresh.prompt(prompt)
    fresh.answer("Reading the brief and going on.", context=12_000)
    assert claude.hook("stop", fresh) is None
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    assert session_of(fresh.session_id).pk == record.target_id
    assert Redirect.objects.get(source_id=session.pk).destination_id == record.target_id


def test_a_clear_that_keeps_the_session_id_hands_the_log_rest_to_the_successor(claude):
    """The other ``/clear`` of Claude Code: the same session id, a clear boundary in the log."""
    log, session, record = prepared(claude)
    claude.hook("user_prompt_submit", log, prompt=PROMPT)
    assert claude.hook("session_end_clear", log) is None
    output = claude.hook("session_start_clear", log)  # the same id and log
    assert PROMPT in output["hookSpecificOutput"]["additionalContext"]
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED
    session.refresh_from_db()
    before = session.turns
    log.prompt("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    log.prompt("Go on.")
    log.answer("Going on.", context=8_000)
    assert claude.hook("stop", log) is None
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    successor = Session.objects.get(pk=record.target_id)
    assert successor.external_id == SOURCE
    assert Message.objects.filter(session=successor, content="Go on.").exists()
    assert not Message.objects.filter(session=session, content="Go on.").exists()
    session.refresh_from_db()
    assert session.turns == before


def test_lineage_and_the_export_name_each_hops_runtime(claude):
    log, session, record = prepared(claude)
    clear(claude, log)
    hop = next(r for r in export.export(session.owner_id)["records"] if r["id"] == str(record.pk))
    assert (hop["sourceRuntime"], hop["targetRuntime"]) == ("claude", "claude")
    claude.client.force_login(session.owner)
    page = claude.client.get(f"/handoff/sessions/{session.pk}/lineage/")
    assert page.status_code == 200, page.status_code
    assert "Claude Code → Claude Code" in page.content.decode()


def test_the_page_of_a_waiting_terminal_session_gives_the_new_terminal_command(claude):
    log, session, record = prepared(claude)
    claude.client.force_login(session.owner)
    page = claude.client.get(f"/handoff/sessions/{session.pk}/review/").content.decode()
    assert "type /clear there" in page
    assert f"claude --session-id {successor_session_id(record.pk)}" in page
    assert f"[handoff:{record.pk.hex[:12]}]" in page
    assert 'value="commit"' not in page  # claimed in the terminal, not committed here


def test_now_asked_on_the_page_commits_through_clear(claude):
    log = claude.log(SOURCE)
    log.turns(6, context=60_000)
    assert claude.hook("stop", log) is None  # no switch on: no attempt
    session = session_of(SOURCE)
    operations.request_now(session.pk)
    record = HandoffRecord.objects.get(source_id=session.pk)
    assert (record.phase, record.reason) == (Phase.PREPARED, "manual")
    successor, output = clear(claude, log)
    assert goal_of(record) in output["hookSpecificOutput"]["additionalContext"]
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED, record.error


@pytest.mark.parametrize(
    ("language", "asks", "form_says"),
    [
        (
            "en",
            "type /clear in its terminal, or open the successor in a new terminal",
            "type /clear there",
        ),
        ("zh-hans", "在它的终端中输入 /clear，或在新终端中打开后继会话", "在那里输入 /clear"),
    ],
)
def test_the_page_of_a_hooked_session_asks_for_clear_not_commit(
    claude, hooked_user, language, asks, form_says
):
    _, session, record = prepared(claude)
    claude.client.force_login(hooked_user)
    page = claude.client.get(f"/s/{session.pk}/", headers={"Accept-Language": language})
    text = html.unescape(page.content.decode())
    notice = text.split('id="review-notice"')[1].split("</p>")[0]
    assert asks in notice
    assert form_says in text
    assert "commit or discard" not in text and "提交或丢弃" not in text
    assert f"claude --session-id {successor_session_id(record.pk)}" in text


@pytest.mark.parametrize(
    ("language", "asks"),
    [
        ("en", "type /clear in its terminal, or open the successor in a new terminal"),
        ("zh-hans", "在它的终端中输入 /clear，或在新终端中打开后继会话"),
    ],
)
def test_the_status_command_of_a_hooked_session_asks_for_clear_not_commit(claude, language, asks):
    _, session, _ = prepared(claude)
    out = StringIO()
    with translation.override(language):
        call_command("handoff", "status", str(session.pk), stdout=out)
    shown = out.getvalue()
    assert asks in shown
    assert "commit or discard" not in shown and "提交或丢弃" not in shown


def test_a_terminal_sessions_brief_is_not_committed_from_the_command_nor_the_api(
    claude, hooked_user
):
    _, session, record = prepared(claude)
    with pytest.raises(CommandError) as refused:
        call_command("handoff", "commit", str(session.pk))
    assert "type /clear in its terminal, or open the successor in a new terminal" in str(
        refused.value
    )
    claude.client.force_login(hooked_user)
    answer = claude.client.post(
        f"/api/sessions/{session.pk}/handoff",
        {"action": "commit"},
        content_type="application/json",
    )
    assert answer.status_code == 409, answer.content
    assert "commits there, not here" in answer.json()["detail"]

    record.refresh_from_db()
    assert record.phase == Phase.PREPARED and record.review_until is not None
    assert not Redirect.objects.filter(source_id=session.pk).exists()
    clear(claude, claude.log(SOURCE))  # its terminal still commits it
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED, record.error
