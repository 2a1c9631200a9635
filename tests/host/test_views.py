"""The chat pages (host.views): login, sidebar, conversation page, composer, new conversation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import talked as talked_once

from common.caching import SHARED_SECONDS
from handoff.core.brief import render_brief, validate_brief
from handoff.models import HandoffRecord, MainState, Redirect
from host import log
from host.models import Message, Role, Session, SourceKind, Workspace
from host.sessions import create_session
from host.signals import session_links
from host.usage import Usage

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]

HTMX = {"HX-Request": "true"}


talked = partial(talked_once, answered=True)  # a session with one exchange (not blank)


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("alice", password="pw")


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob", password="pw")


@pytest.fixture
def as_alice(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


def page(client: Client, session: Session) -> str:
    response = client.get(reverse("chat:session", args=[session.pk]))
    assert response.status_code == 200
    return response.content.decode()


def rows(html: str) -> list[str]:
    """The session ids of the sidebar rows, in order."""
    return re.findall(r'class="session-row[^"]*" data-session-id="([0-9a-f-]+)"', html)


def compose(client: Client, session: Session, text: str, client_id: str = "c1") -> Any:
    return client.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": text, "client_id": client_id},
        headers=HTMX,
    )


# --- accounts -----------------------------------------------------------------------------


def test_anonymous_visitor_is_sent_to_the_login_page(client: Client, alice: Any):
    session = talked(alice, "Private")
    for url in (reverse("chat:index"), reverse("chat:session", args=[session.pk]), "/settings/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_login_page_is_open_and_signs_in(client: Client, alice: Any):
    assert client.get(reverse("login")).status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "pw"})
    assert response.status_code == 302
    assert client.get(reverse("chat:index")).status_code in (200, 302)


def test_api_answers_401_not_a_login_redirect(client: Client):
    assert client.get("/api/sessions").status_code == 401


def test_favicon_is_linked_and_favicon_ico_redirects_to_it(client: Client, alice: Any):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"
    icon = client.get(response["Location"])
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    client.force_login(alice)
    html = page(client, talked(alice, "Icon"))
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html


def test_another_users_session_is_404_everywhere(client: Client, alice: Any, bob: Any):
    session = talked(alice, "Alice's")
    client.force_login(bob)
    assert client.get(reverse("chat:session", args=[session.pk])).status_code == 404
    assert client.get(reverse("chat:messages", args=[session.pk])).status_code == 404
    assert compose(client, session, "let me in").status_code == 404
    assert Message.objects.filter(session=session).count() == 2


def test_another_users_sessions_are_not_in_the_sidebar(as_alice: Client, alice: Any, bob: Any):
    mine = talked(alice, "Mine")
    theirs = talked(bob, "Theirs")
    html = as_alice.get(reverse("chat:sidebar")).content.decode()
    assert str(mine.pk) in rows(html)
    assert str(theirs.pk) not in html


# --- index ----------------------------------------------------------------------------------


def test_index_without_sessions_shows_the_empty_state(as_alice: Client):
    response = as_alice.get(reverse("chat:index"))
    assert response.status_code == 200
    assert "New conversation" in response.content.decode()


def test_index_opens_the_most_recent_session(as_alice: Client, alice: Any):
    talked(alice, "Older")
    newer = talked(alice, "Newer")
    response = as_alice.get(reverse("chat:index"))
    assert response["Location"] == reverse("chat:session", args=[newer.pk])


def test_index_skips_a_blank_conversation_such_as_a_draft_waiting_for_review(
    as_alice: Client, alice: Any
):
    """A successor whose handoff waits for review is blank and unlisted: ``/`` does not open it
    (someone would write to it before its brief)."""
    talked_to = talked(alice, "Refactor the parser")
    create_session(alice, cwd="/work/demo", title="Refactor the parser")  # blank, newer
    response = as_alice.get(reverse("chat:index"))
    assert response["Location"] == reverse("chat:session", args=[talked_to.pk])


# --- sidebar --------------------------------------------------------------------------------


def test_sidebar_groups_by_workspace_with_no_workspace_last(as_alice: Client, alice: Any):
    beta = Workspace.objects.create(owner=alice, path="/src/beta", name="Beta")
    alpha = Workspace.objects.create(owner=alice, path="/src/alpha", name="Alpha")
    in_beta = talked(alice, "In beta", workspace=beta)
    loose = talked(alice, "Loose")
    in_alpha = talked(alice, "In alpha", workspace=alpha)

    html = as_alice.get(reverse("chat:sidebar")).content.decode()

    headings = re.findall(r'<h2 class="group-label"[^>]*>([^<]+)</h2>', html)
    assert headings == ["Alpha", "Beta", "No workspace"]
    assert rows(html) == [str(in_alpha.pk), str(in_beta.pk), str(loose.pk)]


def test_sidebar_hides_blank_rows_except_the_current_one(as_alice: Client, alice: Any):
    shown = talked(alice, "Talked")
    blank = create_session(alice, title="Fresh successor")

    without = rows(as_alice.get(reverse("chat:sidebar")).content.decode())
    current = as_alice.get(reverse("chat:sidebar"), {"current": str(blank.pk)}).content.decode()

    assert without == [str(shown.pk)]
    assert str(blank.pk) in rows(current)
    assert re.search(rf'data-session-id="{blank.pk}"\s+data-blank="true"', current)
    assert 'aria-current="page"' in current


def many_conversations(owner: Any, count: int) -> list[Session]:
    """``count`` conversations that each had a turn, oldest first (bulk: no events)."""
    sessions = Session.objects.bulk_create(
        Session(owner=owner, title=f"Conversation number {n} about the parser", blank=False)
        for n in range(count)
    )
    return sorted(Session.objects.filter(pk__in=[s.pk for s in sessions]), key=lambda s: s.updated)


def test_the_list_of_a_thousand_conversations_is_one_page_under_50_kib(
    as_alice: Client, alice: Any
):
    """The 50 most recent rows plus the page's own, the rest on scroll."""
    sessions = many_conversations(alice, 1000)
    oldest = sessions[0]

    html = page(as_alice, oldest)
    listed = rows(html)

    assert len(html.encode()) < 50 * 1024
    assert listed[:50] == [str(s.pk) for s in sessions[::-1][:50]]
    assert listed[50:] == [str(oldest.pk)]
    assert "?offset=50&amp;current=" in html


def test_a_later_page_of_the_list_holds_the_next_rows(as_alice: Client, alice: Any):
    sessions = many_conversations(alice, 120)[::-1]
    sidebar = partial(as_alice.get, reverse("chat:sidebar"))

    second = sidebar({"offset": "50", "current": str(sessions[0].pk)}).content.decode()
    last = sidebar({"offset": "100"}).content.decode()

    assert rows(second) == [str(s.pk) for s in sessions[51:101]]
    assert "?offset=100" in second
    assert rows(last) == [str(s.pk) for s in sessions[100:]]
    assert "offset=" not in last


def test_a_list_fetched_again_unchanged_answers_304(as_alice: Client, alice: Any):
    talked(alice, "Talked")
    first = as_alice.get(reverse("chat:sidebar"))
    again = as_alice.get(reverse("chat:sidebar"), headers={"If-None-Match": first["ETag"]})
    talked(alice, "Another")
    changed = as_alice.get(reverse("chat:sidebar"), headers={"If-None-Match": first["ETag"]})

    assert "no-cache" in first["Cache-Control"]
    assert again.status_code == 304
    assert changed.status_code == 200


def test_blank_current_session_has_its_row_on_its_own_page(as_alice: Client, alice: Any):
    blank = create_session(alice, title="Draft")
    html = page(as_alice, blank)
    assert str(blank.pk) in rows(html)
    assert f'data-session-id="{blank.pk}"' in html


def test_sidebar_hides_archived_sessions_and_subagents(as_alice: Client, alice: Any):
    main = talked(alice, "Main")
    archived = talked(alice, "Old")
    Session.objects.filter(pk=archived.pk).update(archived=True)
    sub = talked(alice, "Helper", parent=main)

    html = as_alice.get(reverse("chat:sidebar")).content.decode()

    assert rows(html) == [str(main.pk)]
    assert str(sub.pk) not in html


def test_page_carries_the_follower_contract(as_alice: Client, alice: Any):
    session = talked(alice, "Contract")
    html = page(as_alice, session)
    assert f'data-user-id="{alice.pk}"' in html
    assert f'data-session-id="{session.pk}"' in html
    assert (
        f'id="session-list" aria-label="Sessions"\n         hx-get="/sidebar/?current={session.pk}"'
        in html
    )
    assert "/static/follower/follower.js" in html and "/static/vendor/htmx.min.js" in html


# --- conversation page ------------------------------------------------------------------------


def test_tool_calls_and_results_are_folded(as_alice: Client, alice: Any):
    session = talked(alice, "Tools")
    log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content="ls -la",
        tool_name="shell",
    )
    log.append_message(session, role=Role.TOOL, source_kind=SourceKind.TOOL, content="total 0")
    html = page(as_alice, session)
    assert '<summary translate="no">Tool call · shell</summary>' in html
    assert '<summary translate="no">Tool result</summary>' in html
    assert html.count('<details class="msg msg-tool') == 2


def test_tool_lines_and_notices_speak_the_pages_language(as_alice: Client, alice: Any):
    session = talked(alice, "Tools")
    log.append_message(
        session, role=Role.ASSISTANT, source_kind=SourceKind.ASSISTANT, content="ls", tool_name="sh"
    )
    log.append_message(session, role=Role.TOOL, source_kind=SourceKind.TOOL, content="total 0")
    log.select_model(session, "bigger-model")
    log.record_compaction(session, "summary", trigger="manual")
    url = reverse("chat:session", args=[session.pk])
    html = as_alice.get(url, headers={"Accept-Language": "zh-CN"}).content.decode()
    assert '<summary translate="no">工具调用 · sh</summary>' in html
    assert '<summary translate="no">工具结果</summary>' in html
    assert "模型已设为 bigger-model" in html and "会话已压缩（手动）" in html
    assert "Tool call" not in html and "Model set to" not in html


def test_brief_is_a_titled_card_rendered_as_markdown(as_alice: Client, alice: Any):
    session = create_session(alice, title="Successor")
    brief = render_brief(
        validate_brief({"goal": "Ship the CLI", "next_steps": ["write tests", "release"]}),
        source_title="Weather CLI",
    )
    log.append_message(session, role=Role.USER, source_kind=SourceKind.PLUGIN, content=brief)
    html = page(as_alice, session)
    assert '<h2 class="msg-title" translate="no">Handoff brief from “Weather CLI”</h2>' in html
    assert "<p><strong>Goal:</strong> Ship the CLI</p>" in html
    assert "<h2>Next steps</h2>" in html
    assert "<li>write tests</li>" in html
    assert "# Handoff brief" not in html and "**Goal:**" not in html
    assert ">Plugin<" not in html


def test_plugin_message_without_a_heading_is_a_notice(as_alice: Client, alice: Any):
    session = talked(alice, "Source")
    log.append_message(
        session,
        role=Role.SYSTEM,
        source_kind=SourceKind.PLUGIN,
        content="Handed off to “Next” (abc). This conversation is now a relay.",
    )
    html = page(as_alice, session)
    assert re.search(
        r'<p class="notice" role="note"[^>]*>Handed off to “Next” \(abc\)\. '
        r"This conversation is now a relay\.</p>",
        html,
    )
    assert "msg-plugin" not in html and ">Plugin<" not in html


def test_assistant_markdown_is_rendered_and_user_text_is_not(as_alice: Client, alice: Any):
    session = talked(alice, "Markdown")
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.USER, content="**not bold**\n- a"
    )
    log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content="Use `pytest`:\n\n- **fast**\n- simple",
    )
    html = page(as_alice, session)
    assert "<p>Use <code>pytest</code>:</p>" in html
    assert "<li><strong>fast</strong></li>" in html
    assert '<div class="msg-body prewrap" translate="no">**not bold**\n- a</div>' in html


def test_markdown_cannot_inject_script_or_javascript_links(as_alice: Client, alice: Any):
    session = talked(alice, "Injection")
    log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content="<script>alert(1)</script>\n\n[click](javascript:alert(2)) [ok](https://example.com)",
    )
    log.append_message(
        session,
        role=Role.USER,
        source_kind=SourceKind.PLUGIN,
        content="# Note\n\n<img src=x onerror=alert(3)> [x](JavaScript:alert(4))",
    )
    html = page(as_alice, session)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html.lower()
    assert "[click](javascript:alert(2))" in html and "[x](JavaScript:alert(4))" in html
    assert '<a href="https://example.com">ok</a>' in html
    assert "<img" not in html and "&lt;img src=x onerror=alert(3)&gt;" in html


def test_paths_and_identifiers_keep_their_underscores(as_alice: Client, alice: Any):
    session = create_session(alice, title="Successor")
    brief = render_brief(
        validate_brief({"goal": "Ship the CLI", "artifacts": ["/home/demo/weather/__init__.py"]}),
        source_title="Weather CLI",
    )
    log.append_message(session, role=Role.USER, source_kind=SourceKind.PLUGIN, content=brief)
    log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content="Edited weather/__init__.py and pkg.__version__; __init__ runs first. _Done_.",
    )
    html = page(as_alice, session)
    assert "/home/demo/weather/__init__.py" in html
    assert "Edited weather/__init__.py and pkg.__version__; __init__ runs first." in html
    assert "<strong>init</strong>" not in html and "<strong>version</strong>" not in html
    assert "<em>Done</em>" in html


def test_successor_opens_with_the_brief_not_its_model_setup(as_alice: Client, alice: Any):
    session = create_session(alice, title="Successor")
    log.select_model(session, "offline-agent", source="inherited")
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.PLUGIN, content="# Handoff brief\n\ng"
    )
    log.select_model(session, "bigger-model")
    html = page(as_alice, session)
    assert "Model set to offline-agent" not in html
    assert "Model set to bigger-model" in html
    assert html.index("Handoff brief</h2>") < html.index("Model set to bigger-model")


def long_talk(owner: Any, exchanges: int) -> Session:
    session = create_session(owner, title="Long")
    for n in range(1, exchanges + 1):
        log.append_message(
            session, role=Role.USER, source_kind=SourceKind.USER, content=f"question {n}."
        )
        log.append_message(
            session, role=Role.ASSISTANT, source_kind=SourceKind.ASSISTANT, content=f"answer {n}."
        )
    session.refresh_from_db()
    return session


def test_a_long_log_shows_the_latest_200_entries_and_a_link_to_the_rest(
    as_alice: Client, alice: Any
):
    session = long_talk(alice, 110)  # 220 messages
    html = page(as_alice, session)
    assert "Show 20 earlier entries" in html
    assert f'href="/s/{session.pk}/?all=1"' in html
    assert "question 10." not in html and "answer 10." not in html
    assert "question 11." in html and "answer 110." in html
    assert html.count('class="msg msg-user') + html.count('class="msg msg-assistant') == 200
    assert f'hx-get="/s/{session.pk}/messages/" hx-swap="outerHTML"' in html

    everything = as_alice.get(reverse("chat:session", args=[session.pk]), {"all": "1"})
    full = everything.content.decode()
    assert "earlier entries" not in full
    assert "question 1." in full and "answer 110." in full
    assert f'hx-get="/s/{session.pk}/messages/?all=1" hx-swap="outerHTML"' in full

    fragment = as_alice.get(reverse("chat:messages", args=[session.pk]), {"all": "1"})
    assert "question 1." in fragment.content.decode()


def test_composing_on_the_full_log_keeps_it_full(as_alice: Client, alice: Any):
    session = long_talk(alice, 101)
    response = as_alice.post(
        reverse("chat:compose", args=[session.pk]),
        {"text": "one more", "client_id": "c1"},
        headers=HTMX | {"HX-Current-URL": f"http://testserver/s/{session.pk}/?all=1"},
    )
    html = response.content.decode()
    assert "question 1." in html and "one more" in html
    assert "earlier entries" not in html
    cut = compose(as_alice, session, "and another", client_id="c2").content.decode()
    assert "question 1." not in cut and "earlier entries" in cut


def test_relay_is_marked_with_its_source(as_alice: Client, alice: Any):
    source = talked(alice, "Source")
    successor = talked(alice, "Successor")
    original = log.append_message(
        source, role=Role.USER, source_kind=SourceKind.USER, content="late thought"
    )
    Message.objects.filter(pk=original.pk).update(
        forwarded_to=successor.pk, forward_relay_id="r" * 64
    )
    log.append_message(
        successor,
        role=Role.USER,
        source_kind=SourceKind.RELAY,
        content="late thought",
        relay_id="r" * 64,
    )
    successor_html = page(as_alice, successor)
    source_html = page(as_alice, source)
    assert "relayed from" in successor_html
    assert reverse("chat:session", args=[source.pk]) in successor_html
    assert "forwarded to" in source_html


def test_token_figure_says_estimated_without_usage(as_alice: Client, alice: Any):
    session = talked(alice, "No usage")
    html = page(as_alice, session)
    assert 'class="badge badge-estimated">estimated<' in html


def test_token_figure_says_exact_with_usage(as_alice: Client, alice: Any):
    session = talked(alice, "Usage")
    log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content="ok",
        usage=Usage(uncached_input=1000, output=20, cache_read=500, cache_write=0),
    )
    html = page(as_alice, session)
    assert "<strong>1,500</strong> tokens" in html
    assert 'class="badge badge-exact">exact<' in html


def test_token_figure_says_unavailable_when_nothing_measures(as_alice: Client, alice: Any):
    session = create_session(alice, title="Empty")
    html = page(as_alice, session)
    figure = html.split('<p class="tokens">', 1)[1].split("</p>", 1)[0]
    assert " ".join(re.sub(r"<[^>]+>", " ", figure).split()) == "Token usage unavailable"


def test_handed_off_session_shows_the_banner(as_alice: Client, alice: Any):
    source = talked(alice, "Source")
    successor = talked(alice, "Weather CLI, continued")
    record = HandoffRecord.objects.create(
        source=source,
        target=successor,
        phase="started",
        reason="manual",
        source_revision=1,
        brief={"goal": "g"},
    )
    Redirect.objects.create(source=source, destination=successor, record=record)

    html = page(as_alice, source)

    assert "This conversation continues in" in html
    assert f'<a href="/s/{successor.pk}/">Weather CLI, continued</a>' in html
    assert "Hand off now" not in html


def test_a_continued_title_explains_its_suffix(as_alice: Client, alice: Any):
    source = talked(alice, "Weather CLI · 接续abc123")
    Redirect.objects.create(source=source, destination=talked(alice, "Weather CLI"))
    html = page(as_alice, source)
    heading = (
        '<h1 id="conv-title" class="conv-title" data-handoff-title translate="no">'
        "Weather CLI · 接续abc123</h1>"
    )
    assert heading in html
    assert 'id="conv-hint" class="conv-hint muted small"' in html
    assert "接续 = continued in a successor</span> · what is posted here is forwarded" in html
    assert '<span class="row-title" translate="no">Weather CLI · 接续abc123</span>' in html
    assert '<span class="row-note">接续 = continued in a successor</span>' in html


def test_a_plain_title_has_no_continued_hint(as_alice: Client, alice: Any):
    html = page(as_alice, talked(alice, "Weather CLI"))
    assert "continued in a successor" not in html


def test_session_without_redirect_has_no_banner(as_alice: Client, alice: Any):
    html = page(as_alice, talked(alice, "Plain"))
    assert "continues in" not in html
    assert "Hand off now" in html


def test_the_conversation_page_shows_no_template_syntax(as_alice: Client, alice: Any):
    html = page(as_alice, talked(alice, "Plain"))
    for syntax in ("{#", "#}", "{%", "%}", "{{", "}}"):
        assert syntax not in html


# --- composer -------------------------------------------------------------------------------


def test_composer_posts_a_message_and_shows_the_log(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    response = compose(as_alice, session, "Please add tests")
    html = response.content.decode()
    assert response.status_code == 200
    assert Message.objects.filter(session=session, content="Please add tests").count() == 1
    assert 'id="timeline"' in html and "Please add tests" in html
    assert 'id="composer"' in html  # a fresh composer, out of band
    assert "handoff:refresh" in response["HX-Trigger"]


def test_composer_double_submit_posts_once(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    compose(as_alice, session, "once", client_id="same")
    compose(as_alice, session, "once", client_id="same")
    assert Message.objects.filter(session=session, content="once").count() == 1


def test_composer_refuses_an_empty_message(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    before = Message.objects.filter(session=session).count()
    response = compose(as_alice, session, "   ")
    assert response.status_code == 422
    assert Message.objects.filter(session=session).count() == before


def test_composer_on_a_handed_off_session_says_forwarded(as_alice: Client, alice: Any):
    source = talked(alice, "Source")
    successor = talked(alice, "The successor")
    Redirect.objects.create(source=source, destination=successor)

    html = compose(as_alice, source, "one more thing").content.decode()

    assert "Forwarded to" in html
    assert f'<a href="/s/{successor.pk}/">The successor</a>' in html
    assert Message.objects.filter(session=successor, source_kind=SourceKind.RELAY).count() == 1


@pytest.mark.parametrize("command", ["/handoff now", "/handoff enable"])
def test_composer_handoff_on_a_handed_off_session_names_the_successor(
    as_alice: Client, alice: Any, command: str
):
    source = talked(alice, "Source")
    successor = talked(alice, "The successor")
    Redirect.objects.create(source=source, destination=successor)

    html = compose(as_alice, source, command).content.decode()

    assert "feedback-error" in html
    assert "already handed off to “The successor”" in html
    assert "/handoff disable stops forwarding" in html
    assert str(successor.pk) not in html.split("feedback-error", 1)[1].split("</div>", 1)[0]
    assert not MainState.objects.filter(session=source, requested=True).exists()


def test_composer_handoff_disable_on_a_relay_says_forwarding_stopped(as_alice: Client, alice: Any):
    source = talked(alice, "Weather CLI · 接续abc123")
    Redirect.objects.create(source=source, destination=talked(alice, "Weather CLI"))

    flash = compose(as_alice, source, "/handoff disable").content.decode()
    header = page(as_alice, source).split('<section id="handoff-panel"', 1)[0]

    assert "Forwarding stopped: messages posted here are answered here again" in flash
    assert "Automatic handoff disabled" not in flash
    assert "forwarding stopped, it is answered here again</p>" in header
    assert "forwarded to it</p>" not in header


def test_the_panel_after_disable_updates_the_title_hint_in_place(as_alice: Client, alice: Any):
    source = talked(alice, "Weather CLI · 接续abc123")
    Redirect.objects.create(source=source, destination=talked(alice, "Weather CLI"))
    url = reverse("handoff_web:session_action", args=[source.pk, "disable"])

    html = as_alice.post(url, headers=HTMX).content.decode()

    assert '<p id="conv-hint" class="conv-hint muted small" hx-swap-oob="true"' in html
    assert "forwarding stopped, it is answered here again</p>" in html


def test_composer_handoff_on_a_subagent_says_only_mains_hand_off(as_alice: Client, alice: Any):
    helper = create_session(alice, title="helper", parent=talked(alice, "Main"))
    html = compose(as_alice, helper, "/handoff now").content.decode()
    assert "helper agent&#x27;s conversation: only main conversations hand off" in html
    assert not MainState.objects.filter(session=helper).exists()


@pytest.mark.parametrize("command", ["/handoff", "/handoff now"])
def test_composer_handoff_now_requests_a_handoff(
    as_alice: Client, alice: Any, command: str, settings: Any
):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    session = talked(alice, "Chat")
    html = compose(as_alice, session, command).content.decode()
    assert "Handoff requested" in html
    assert MainState.objects.get(session=session).requested


def test_composer_handoff_enable_and_disable(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    assert "enabled" in compose(as_alice, session, "/handoff enable", "a").content.decode()
    assert MainState.objects.get(session=session).enabled
    assert "disabled" in compose(as_alice, session, "/handoff disable", "b").content.decode()
    assert not MainState.objects.get(session=session).enabled


def test_composer_handoff_status_shows_the_report(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    html = compose(as_alice, session, "/handoff status").content.decode()
    assert "Handoff status" in html
    assert "Automatic handoff (this conversation)" in html
    assert "estimated" in html
    assert '<div class="feedback feedback-command feedback-card">' in html
    assert 'aria-label="Close"' in html and ">×</button>" in html
    assert "this.closest('.feedback').remove()" in html
    assert '<div class="feedback-scroll"><div class="status-report">' in html
    assert not Message.objects.filter(session=session, content__startswith="/handoff").exists()


def test_composer_unknown_handoff_action_is_an_error(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    html = compose(as_alice, session, "/handoff sideways").content.decode()
    assert "feedback-error" in html and "Unknown /handoff action" in html
    assert not MainState.objects.filter(session=session, requested=True).exists()


def test_composer_unknown_command_is_an_error(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    html = compose(as_alice, session, "/frobnicate").content.decode()
    assert "Unknown command /frobnicate" in html


def test_composer_compact(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    html = compose(as_alice, session, "/compact").content.decode()
    session.refresh_from_db()
    assert "Compacted" in html
    assert session.compactions == 1
    assert '<p id="conv-meta" class="conv-meta" hx-swap-oob="true">' in html
    assert "<span>1 compaction</span>" in html


@pytest.mark.parametrize(
    ("language", "says"),
    [
        ("en", "This conversation has nothing to compact yet."),
        ("zh-hans", "此会话还没有可压缩的内容。"),
    ],
)
def test_composer_compact_with_nothing_to_compact_says_so_in_the_page_language(
    as_alice: Client, alice: Any, language: str, says: str
):
    session = create_session(alice, title="Empty")
    as_alice.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    html = compose(as_alice, session, "/compact").content.decode()
    assert says in html
    assert f"session {session.pk}" not in html


def test_compact_is_a_command_not_a_message_like_handoff(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    compose(as_alice, session, "/compact", client_id="c1")
    compose(as_alice, session, "/handoff status", client_id="c2")
    html = page(as_alice, session)
    assert "Conversation compacted (manual)" in html
    assert ">/compact</div>" not in html and ">/handoff status</div>" not in html
    assert html.count('<span class="msg-who">You</span>') == 1  # the "hi" of talked()


def test_pages_that_change_by_events_are_never_cached(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    for url in (reverse("chat:session", args=[session.pk]), "/settings/", reverse("chat:new")):
        assert "no-store" in as_alice.get(url)["Cache-Control"], url


def test_a_page_opened_by_following_a_move_may_be_shared_for_a_few_seconds(
    as_alice: Client, alice: Any, bob: Any
):
    """The follower's ``?followed=1`` (common/caching.py): stored privately for
    ``SHARED_SECONDS``, so the browser's other tabs following the same move read one render;
    without the mark it is never stored, and a refusal is not shared."""
    session = talked(alice, "Chat")
    url = reverse("chat:session", args=[session.pk])
    followed = as_alice.get(f"{url}?followed=1")
    assert followed.status_code == 200
    assert followed["Cache-Control"] == f"private, max-age={SHARED_SECONDS}"
    assert "no-store" in as_alice.get(f"{url}?followed=0")["Cache-Control"]
    elsewhere = reverse("chat:session", args=[talked(bob, "Theirs").pk])
    missing = as_alice.get(f"{elsewhere}?followed=1")
    assert missing.status_code == 404 and "max-age" not in missing.get("Cache-Control", "")


def test_the_timeline_refresh_updates_the_header_counts(as_alice: Client, alice: Any):
    session = talked(alice, "Counts")
    html = page(as_alice, session)
    assert html.count('id="conv-meta"') == 1 and "hx-swap-oob" not in html
    assert "<span>1 turn</span>" in html
    log.append_message(
        session, role=Role.USER, source_kind=SourceKind.USER, content="again", starts_turn=True
    )
    fragment = as_alice.get(reverse("chat:messages", args=[session.pk])).content.decode()
    assert '<p id="conv-meta" class="conv-meta" hx-swap-oob="true">' in fragment
    assert "<span>2 turns</span>" in fragment


def test_composer_double_slash_posts_a_message(as_alice: Client, alice: Any):
    session = talked(alice, "Chat")
    compose(as_alice, session, "//handoff is a word")
    assert Message.objects.filter(session=session, content="/handoff is a word").exists()


# --- new conversation -----------------------------------------------------------------------


def test_new_conversation_in_a_workspace_uses_its_directory(as_alice: Client, alice: Any):
    workspace = Workspace.objects.create(owner=alice, path="/src/app", name="App")
    response = as_alice.post(reverse("chat:new"), {"title": "Plan", "workspace": workspace.pk})
    session = Session.objects.get(owner=alice, title="Plan")
    assert response["Location"] == reverse("chat:session", args=[session.pk])
    assert session.workspace == workspace and session.cwd == "/src/app" and session.blank


def test_new_conversation_runs_on_the_default_presets_model(
    as_alice: Client, alice: Any, settings: Any
):
    """The page's new conversation and the JSON API choose the model one way (the preset's
    model, else the deployment's default): a deployment whose default preset
    names a model gets it from the form too; without one, the default model."""
    as_alice.post(reverse("chat:new"), {"title": "Plain", "cwd": "/src/app"})
    settings.HOST_AGENT_PRESETS = {"default": {"options": {"model": "gpt-4.1"}, "realm": ()}}
    as_alice.post(reverse("chat:new"), {"title": "Preset", "cwd": "/src/app"})
    models = dict(Session.objects.filter(owner=alice).values_list("title", "model"))
    assert models == {"Plain": settings.HOST_DEFAULT_MODEL, "Preset": "gpt-4.1"}


def test_new_conversation_rejects_a_relative_directory(as_alice: Client):
    response = as_alice.post(reverse("chat:new"), {"title": "X", "cwd": "relative/dir"})
    assert response.status_code == 422
    assert "absolute path" in response.content.decode()
    assert not Session.objects.exists()


def test_new_conversation_cannot_use_another_users_workspace(as_alice: Client, bob: Any):
    theirs = Workspace.objects.create(owner=bob, path="/src/bob", name="Bob's")
    response = as_alice.post(reverse("chat:new"), {"title": "X", "workspace": theirs.pk})
    assert response.status_code == 422
    assert not Session.objects.exists()


# --- chains (docs/design.md, Lineage): the host folds what the session_links hook tells it ----


@pytest.fixture
def linked(alice: Any) -> Iterator[dict[Any, Any]]:
    """A stand-in plugin answering ``session_links`` from this dict (source → successor)."""
    known: dict[Any, Any] = {}

    def answer(sender: Any, session_ids: list[Any], **kwargs: Any) -> dict[Any, Any]:
        return {s: t for s, t in known.items() if s in session_ids}

    session_links.connect(answer, dispatch_uid="test.linked")
    yield known
    session_links.disconnect(dispatch_uid="test.linked")


def test_sidebar_folds_a_chain_into_its_newest_row(
    as_alice: Client, alice: Any, linked: dict[Any, Any]
):
    hops = [talked(alice, f"Hop {i}") for i in range(3)]
    other = talked(alice, "Other")
    linked.update({hops[0].pk: hops[1].pk, hops[1].pk: hops[2].pk})

    html = as_alice.get(reverse("chat:sidebar")).content.decode()

    folded = re.search(r"<details.*?</details>", html, re.S)
    assert folded is not None and "2 earlier handoffs" in folded.group()
    assert rows(folded.group()) == [str(hops[1].pk), str(hops[0].pk)]
    top = html.replace(folded.group(), "")
    assert rows(top) == [str(other.pk), str(hops[2].pk)]
    assert '<details class="chain-older">' in html  # closed: the page shows none of them


def test_sidebar_opens_the_fold_holding_the_current_page(
    as_alice: Client, alice: Any, linked: dict[Any, Any]
):
    old, new = talked(alice, "Old"), talked(alice, "New")
    linked[old.pk] = new.pk
    html = as_alice.get(reverse("chat:sidebar"), {"current": str(old.pk)}).content.decode()
    assert '<details class="chain-older" open>' in html
