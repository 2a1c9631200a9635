"""The page-wide follower in headless Chromium (docs/spec.md, Follower rules).

Websockets need an ASGI server, so these tests run Daphne on ``config.asgi`` in a subprocess
against the test database (``asgi_site``, the fixtures ``asgi_server`` and ``open_page``) and
commit handoffs from the test process with
``handoff.operations.run_attempt``, as ``handoff now --wait`` does. The server hears of the
events through the channel layer (Redis) or, on the in-memory layer, through its process-wide
reader of the stored events (``follower.hub``), as under ``make run``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from datetime import timedelta
from io import StringIO
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from asgi_site import AsgiServer, answer, conversation, off_loop, wait_following
from django.contrib.sessions.models import Session as DjangoSession
from django.core.management import call_command
from django.test import Client
from playwright.sync_api import expect

from bench import follower_site
from follower.events import prune_events
from handoff import operations, services
from handoff.models import HandoffRecord, HandoffSettings
from host import log
from host.models import Session
from host.services import SessionController
from host.sessions import create_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def memory_server(asgi_server: AsgiServer) -> Iterator[AsgiServer]:
    """A second server on the in-memory channel layer: it hears of events only by polling."""
    server = AsgiServer(asgi_server.env["DATABASE_URL"], follower_site.free_port())
    server.env.pop("REDIS_URL", None)
    server.start()
    yield server
    server.stop()


def hand_off(source: Session, *, start: bool = True) -> Session:
    """Commit a manual handoff from the command line (``handoff now --wait``); return the
    successor.

    ``start=False`` makes the successor's start fail, so it stays blank (docs/spec.md,
    Failure outcomes: committed-start-pending; the command would exit 3, so the operation is called
    directly).
    """
    if start:
        off_loop(
            lambda: call_command("handoff", "now", str(source.pk), "--wait", stdout=StringIO())
        )
    else:
        failing = mock.patch("host.services.SessionController.start", side_effect=RuntimeError)
        with failing:
            outcome = off_loop(lambda: operations.run_attempt(source.pk, manual=True))
        assert outcome.outcome == "committed-start-pending", outcome.detail
    record = HandoffRecord.objects.get(source=source)
    assert record.target_id is not None
    return Session.objects.get(pk=record.target_id)


def row(page: Any, session: Session) -> Any:
    return page.locator(f'#session-list .session-row[data-session-id="{session.pk}"]')


def follower(page: Any) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        """() => ({state: follower.state().connection,
                  tries: Number(document.documentElement.dataset.handoffTries),
                  jump: document.documentElement.dataset.handoffJump ?? null})"""
    )
    return state


def test_handoff_moves_every_tab_on_the_source_and_updates_the_others(make_user, open_page):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    other = conversation(ada, "Release notes")
    first, second = open_page(ada, source), open_page(ada, source)
    third = open_page(ada, other)

    successor = hand_off(source)

    for page in (first, second):
        page.wait_for_url(f"**/s/{successor.pk}/")
        assert row(page, successor).is_visible()
    row(third, successor).wait_for()
    assert third.url.endswith(f"/s/{other.pk}/")
    assert follower(third)["jump"] is None


def test_a_burst_of_events_updates_the_session_list_without_fetching_it(
    make_user, open_page, asgi_server
):
    """A handoff makes about ten events; replayed together after a reconnect, another page
    puts the rows they carry into its session list and fetches it not once."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, conversation(ada, "Release notes"))
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "/sidebar/" in r.url else None)

    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    successor = hand_off(source)
    asgi_server.start()
    row(page, successor).wait_for()
    page.wait_for_function("() => window.__events.length >= 5")
    # nothing-happens: a row with no place in the list is fetched 100 ms after its event.
    page.wait_for_timeout(200)

    assert fetched == []


def test_page_opened_on_a_handed_off_session_stays_and_shows_the_banner(make_user, open_page):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    successor = hand_off(source)
    page = open_page(ada, source)

    banner = page.get_by_text("This conversation continues in")
    assert banner.is_visible()
    assert banner.get_by_role("link").get_attribute("href") == f"/s/{successor.pk}/"

    off_loop(lambda: SessionController().rename(source, "Renamed while the page is open"))
    # A page that moves decides so as the event arrives, before it is recorded.
    page.wait_for_function("() => window.__events.some((e) => e.kind === 'session.updated')")
    assert page.url.endswith(f"/s/{source.pk}/")
    assert follower(page)["jump"] is None


@pytest.mark.parametrize("pruned", [False, True], ids=["replayed", "resync"])
def test_handoff_while_the_socket_is_cut_still_moves_the_page(
    make_user, open_page, asgi_server, pruned
):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source)

    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    successor = hand_off(source)
    if pruned:
        prune_events(now=successor.created + timedelta(days=1))
    asgi_server.start()

    page.wait_for_url(f"**/s/{successor.pk}/")
    assert row(page, successor).is_visible()
    # Named as the person knew it: from the replayed redirect event, else the heading, which a
    # page that missed the events still shows untagged.
    page.wait_for_function(
        "() => document.getElementById('follow-moved')?.textContent"
        " === 'Moved here from “Refactor the parser”.'"
    )


def test_successor_that_stays_blank_is_tried_12_times_then_left(make_user, open_page):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source)

    successor = hand_off(source, start=False)

    page.wait_for_function("() => document.documentElement.dataset.handoffJump === 'gave-up'")
    assert follower(page)["tries"] == 12
    assert page.url.endswith(f"/s/{source.pk}/")
    assert row(page, successor).count() == 0
    # nothing-happens: a 13th try would come 100 ms (retryInterval) after the 12th.
    page.wait_for_timeout(300)
    assert follower(page)["tries"] == 12


def test_second_user_receives_no_event_of_the_first(make_user, open_page, asgi_server):
    ada, bob = make_user("ada"), make_user("bob")
    source = conversation(ada, "Refactor the parser")
    ada_page = open_page(ada, conversation(ada, "Release notes"))
    bob_page = open_page(bob, conversation(bob, "Bob's own work"))

    hand_off(source)

    ada_page.wait_for_function("() => window.__events.some((e) => e.kind === 'handoff.phase')")
    ada_page.wait_for_function("() => window.__events.some((e) => e.kind === 'redirect.committed')")
    # nothing-happens: bob's socket is on the same server, which has relayed ada's events by now.
    bob_page.wait_for_timeout(300)
    assert bob_page.evaluate("() => window.__events") == []
    response = bob_page.goto(f"{asgi_server.url}/s/{source.pk}/")
    assert response is not None and response.status == 404


def test_chain_handed_on_while_offline_ends_on_the_final_destination(
    make_user, open_page, asgi_server
):
    ada = make_user("ada")
    first = conversation(ada, "Refactor the parser")
    page = open_page(ada, first)

    second = hand_off(first)
    page.wait_for_url(f"**/s/{second.pk}/")
    wait_following(page, second)
    answer(second)
    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    third = hand_off(second)
    asgi_server.start()

    page.wait_for_url(f"**/s/{third.pk}/")
    assert row(page, third).is_visible()


def test_two_handoffs_in_quick_succession_move_each_tab_to_its_own_successor(make_user, open_page):
    ada = make_user("ada")
    one, two = conversation(ada, "Refactor the parser"), conversation(ada, "Release notes")
    first, second = open_page(ada, one), open_page(ada, two)

    def both() -> None:
        for source in (one, two):
            call_command("handoff", "now", str(source.pk), "--wait", stdout=StringIO())

    off_loop(both)
    one_next = HandoffRecord.objects.get(source=one).target_id
    two_next = HandoffRecord.objects.get(source=two).target_id

    first.wait_for_url(f"**/s/{one_next}/")
    second.wait_for_url(f"**/s/{two_next}/")


def test_page_opened_on_the_successor_stays(make_user, open_page):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    successor = hand_off(source)
    page = open_page(ada, successor)

    other = conversation(ada, "Release notes")
    row(page, other).wait_for()  # a page that moves decides so as the row's event arrives
    assert page.url.endswith(f"/s/{successor.pk}/")
    assert follower(page)["jump"] is None


def test_missed_events_beyond_the_limit_resync_and_still_move_the_page(
    make_user, open_page, asgi_server, settings
):
    settings.FOLLOWER_EVENT_LIMIT = 2
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source)

    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    for n in range(3):
        conversation(ada, f"Busy work {n}")
    successor = hand_off(source)
    asgi_server.start()

    page.wait_for_url(f"**/s/{successor.pk}/")


@pytest.mark.parametrize(
    ("unanswered_url", "config"),
    [("**/follow/snapshot", {}), ("**/sidebar/?*", {"refreshDelay": 60_000})],
    ids=["snapshot", "session-list"],
)
def test_a_read_that_never_comes_after_a_resync_is_made_again_and_the_page_still_moves(
    make_user, open_page, asgi_server, unanswered_url, config
):
    """After a resync the page reads a fresh snapshot (follower.js), and the retry rule
    refreshes the session list before it opens the successor (static/chat-rows.js; the list's
    own refresh after the resync is put off here, so the retry's is the first). Over a
    half-open connection the first such read never answers: it gives up after
    ``fetchTimeout`` ms, the read is made again, and the handoff the page missed still moves
    it."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source, config=config)
    unanswered: list[Any] = []
    page.route(
        unanswered_url,
        lambda route: unanswered.append(route) if not unanswered else route.continue_(),
    )

    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    successor = hand_off(source)
    prune_events(now=successor.created + timedelta(days=1))
    asgi_server.start()

    page.wait_for_url(f"**/s/{successor.pk}/")
    assert len(unanswered) == 1


def test_resync_refreshes_the_session_list(make_user, open_page, asgi_server):
    ada = make_user("ada")
    page = open_page(ada, conversation(ada, "Refactor the parser"))

    asgi_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    added = conversation(ada, "Added while offline")
    prune_events(now=added.created + timedelta(days=1))
    asgi_server.start()

    row(page, added).wait_for()


def test_after_a_resync_the_socket_still_reads_stored_events(make_user, open_page, memory_server):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source, server=memory_server)

    memory_server.stop()
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    busy = conversation(ada, "Busy work")
    prune_events(now=busy.created + timedelta(days=1))
    memory_server.start()
    wait_following(page, busy)  # the snapshot read after the resync

    successor = hand_off(source)
    page.wait_for_url(f"**/s/{successor.pk}/")


def test_settings_and_new_conversation_pages_follow_without_jumping(make_user, open_page):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    new, card = open_page(ada, path="/new/"), open_page(ada, path="/settings/")
    assert card.locator("#status-channel").get_attribute("data-state") == "connected"

    successor = hand_off(source)

    # A page that moves decides so as the redirect's event arrives, before it is recorded.
    for page in (new, card):
        page.wait_for_function("() => window.__events.some((e) => e.kind === 'redirect.committed')")
    row(new, successor).wait_for()
    assert new.url.endswith("/new/") and card.url.endswith("/settings/")
    assert follower(new)["jump"] is None and follower(card)["jump"] is None


def test_refused_websocket_leaves_the_page_usable_and_quiet(make_user, open_page, asgi_server):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(
        ada, source, wait=False, config={"socketPath": "/ws/nowhere/", "backoffCap": 200}
    )
    page.wait_for_function("() => follower.state().connection === 'unavailable'")
    for _ in range(2):  # tries again (and is refused again), saying nothing more
        page.wait_for_event("websocket")

    page.get_by_role("textbox").first.fill("Still here")
    page.get_by_role("button", name="Send").click()
    page.get_by_text("Still here").last.wait_for()
    assert page.evaluate("() => window.__statuses") == ["unavailable"]
    # The browser's own report of each failed handshake is all the console shows.
    assert [p for p in page.problems if not p.startswith("WebSocket connection to")] == []


def test_an_idle_page_keeps_its_socket(make_user, open_page):
    """Nothing to relay for longer than the channel layer's 5 s blocking read (BZPOPMIN); a
    close, from either side, would have reported the socket unavailable."""
    ada = make_user("ada")
    page = open_page(ada, conversation(ada, "Refactor the parser"))
    # nothing-happens: the socket stays open past the layer's 5 s read, which started earlier.
    page.wait_for_timeout(5500)
    assert page.evaluate("() => window.__statuses") == ["connected"]


def test_a_tab_left_open_after_signing_out_hears_nothing_more(make_user, open_page, asgi_server):
    """Two users on one browser: ada signs out in another tab and bob signs in."""
    ada, bob = make_user("ada"), make_user("bob")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)

    other = tab.context.new_page()
    other.goto("/")
    other.get_by_role("button", name="Sign out").click()
    other.wait_for_url("**/accounts/login/**")
    client = Client()
    client.force_login(bob)
    cookie = client.cookies["sessionid"].value
    tab.context.add_cookies([{"name": "sessionid", "value": cookie, "url": asgi_server.url}])

    hand_off(source)
    conversation(bob, "Bob's own work")
    # Closed for the sign-out (4401): the page does not reconnect, and nothing comes after.
    tab.wait_for_function("() => follower.state().connection === 'unavailable'")
    assert tab.evaluate("() => window.__events") == []
    assert tab.url.endswith(f"/s/{source.pk}/")


def test_a_tab_reloaded_during_the_handoff_still_moves_with_the_other(make_user, open_page):
    """The second tab renders the pre-handoff page, the handoff commits, then its follower
    starts: its baseline is what it was rendered with, so it saw the transition."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    first, second = open_page(ada, source), open_page(ada, source)
    held: list[Any] = []
    second.route("**/follower.js", lambda route: route.continue_() if held else held.append(route))

    second.reload(wait_until="commit")
    while not held:
        second.wait_for_timeout(20)
    assert second.get_by_text("This conversation continues in").count() == 0
    successor = hand_off(source)
    first.wait_for_url(f"**/s/{successor.pk}/")
    held[0].continue_()

    second.wait_for_url(f"**/s/{successor.pk}/")
    assert row(second, successor).is_visible()


def test_a_half_open_socket_is_noticed_and_the_page_still_follows(
    make_user, open_page, asgi_server
):
    """The server stops answering without closing anything (no FIN): the heartbeat notices,
    the page reconnects when it can and replays what it missed."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source, config={"heartbeatInterval": 300, "heartbeatTimeout": 700})

    assert asgi_server.process is not None
    asgi_server.process.send_signal(signal.SIGSTOP)
    try:
        page.wait_for_function("() => follower.state().connection === 'unavailable'")
        successor = hand_off(source)
    finally:
        asgi_server.process.send_signal(signal.SIGCONT)

    page.wait_for_url(f"**/s/{successor.pk}/")


def test_an_oversized_frame_ends_only_its_socket_and_the_page_still_follows(make_user, open_page):
    """A frame over Daphne's 1 MiB ends that socket (dropped: 1006, as a network failure looks);
    the page's own socket and the worker go on."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source)

    code = page.evaluate(
        """() => new Promise((resolve) => {
          const socket = new WebSocket(`ws://${location.host}/ws/follow/`);
          socket.onopen = () => socket.send(" ".repeat(2 * 1024 * 1024));
          socket.onclose = (close) => resolve(close.code);
        })"""
    )
    assert code == 1006
    successor = hand_off(source)
    page.wait_for_url(f"**/s/{successor.pk}/")


def test_a_page_reconnecting_as_another_user_hears_nothing(make_user, open_page, asgi_server):
    """ada's tab lost its socket; meanwhile ada was signed out and bob signed in on the browser."""
    ada, bob = make_user("ada"), make_user("bob")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)

    asgi_server.stop()
    tab.wait_for_function("() => follower.state().connection === 'unavailable'")
    DjangoSession.objects.all().delete()
    client = Client()
    client.force_login(bob)
    cookie = client.cookies["sessionid"].value
    tab.context.add_cookies([{"name": "sessionid", "value": cookie, "url": asgi_server.url}])
    asgi_server.start()

    hand_off(conversation(bob, "Bob's own work"))
    # nothing-happens: the page reconnects within the 1 s backoff cap and is refused.
    tab.wait_for_timeout(1500)
    assert tab.evaluate("() => window.__events") == []
    assert tab.evaluate("() => window.__statuses") == ["connected", "unavailable"]


def test_signing_out_while_retrying_leaves_the_sidebar_alone(make_user, open_page):
    """The session list URL answers with the sign-in page then: it is not a session list."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    page = open_page(ada, source, config={"retryInterval": 300})

    hand_off(source, start=False)
    page.wait_for_function("() => document.documentElement.dataset.handoffJump === 'retrying'")
    DjangoSession.objects.all().delete()
    page.wait_for_function("() => document.documentElement.dataset.handoffJump === 'gave-up'")
    assert page.locator("#session-list form").count() == 0
    assert row(page, source).is_visible()


def test_a_tab_with_unsent_text_stays_with_a_banner_and_a_moved_tab_is_announced(
    make_user, open_page
):
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    typing, idle = open_page(ada, source), open_page(ada, source)
    typing.locator("#composer textarea").fill("half a thought")

    successor = hand_off(source)

    idle.wait_for_url(f"**/s/{successor.pk}/")
    moved = idle.locator("#follow-moved")
    assert moved.get_attribute("aria-live") == "polite"
    idle.wait_for_function(
        "() => document.getElementById('follow-moved').textContent"
        " === 'Moved here from “Refactor the parser”.'"
    )
    held = typing.locator("#follow-held")
    held.wait_for()
    assert "This conversation continues in" in held.inner_text()
    assert held.get_by_role("link").get_attribute("href") == f"/s/{successor.pk}/"
    # The banner shows once the tab decided to stay ("held"): it moves no more.
    assert typing.url.endswith(f"/s/{source.pk}/")
    assert typing.locator("#composer textarea").input_value() == "half a thought"
    assert follower(typing)["jump"] == "held"
    assert typing.problems == [] and idle.problems == []


# --- live settings -------------------------------------------------------------------------------


def type_setting(page: Any, name: str, value: str, *, leave: bool = True) -> None:
    """Type ``value`` into a setting of the card; ``leave`` it (the change event saves it)."""
    field = page.locator(f"#id_{name}")
    field.fill(value)
    if leave:
        field.press("Tab")


def hold_the_first(page: Any, url: str, *, answered_now: bool) -> Callable[[], None]:
    """Hold the page's first request to ``url`` (a glob) until the returned ``release()`` is
    called: the server answers it at once (``answered_now``), the page gets that answer on
    release; or the server gets it only on release. Later requests to ``url`` pass."""
    held: list[tuple[Any, Any]] = []

    def hold(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch() if answered_now else None))

    def release() -> None:
        while not held:
            page.wait_for_timeout(50)
        route, response = held[0]
        if answered_now:
            route.fulfill(response=response)
        else:
            route.continue_()

    page.route(url, hold)
    return release


def test_a_settings_change_shows_in_every_open_tab(make_user, open_page):
    root = make_user("root", staff=True)
    session = conversation(root, "Refactor the parser")
    off_loop(lambda: operations.enable(session.pk))
    first, second = open_page(root, path="/settings/"), open_page(root, path="/settings/")
    chat, other_chat = open_page(root, session), open_page(root, session)
    assert chat.get_by_text("The global switch is off").is_visible()

    type_setting(first, "handoff_ratio", "0.6")
    first.get_by_label("Automatic handoff").check()

    second.wait_for_function("() => document.getElementById('id_handoff_ratio').value === '0.6'")
    second.wait_for_function("() => document.getElementById('id_auto_handoff').checked")
    chat.get_by_text("The global switch is off").wait_for(state="detached")
    chat.get_by_role("switch", name="Automatic handoff").uncheck()
    other_chat.wait_for_function("() => !document.getElementById('handoff-switch').checked")
    assert first.problems == [] and second.problems == [] and chat.problems == []


def test_a_followed_folders_switch_shows_in_the_users_other_tab(make_user, open_page):
    """Switching a runtime's folder on in one tab shows it on in the user's other tab, and
    off again; another user's switch stays off."""
    ada, bob = make_user("ada"), make_user("bob")
    first, second = open_page(ada, path="/settings/"), open_page(ada, path="/settings/")
    others = open_page(bob, path="/settings/")
    switch = "#folder-codex-on"

    first.locator(switch).check()
    expect(second.locator(switch)).to_be_checked()
    first.locator(switch).uncheck()
    expect(second.locator(switch)).not_to_be_checked()
    expect(first.locator("#folder-codex .field-saved")).to_have_text("Saved")
    # nothing-happens: bob's tab is on the same server, which has relayed ada's changes by now.
    others.wait_for_timeout(300)
    expect(others.locator(switch)).not_to_be_checked()
    assert first.problems == [] and second.problems == [] and others.problems == []


def test_a_settings_change_during_the_panels_own_refresh_still_reaches_it(make_user, open_page):
    """The panel's refresh is in flight (held here) when the global switch goes on: the
    refresh asked for meanwhile is not lost with the panel the held answer replaces."""
    root = make_user("root", staff=True)
    session = conversation(root, "Refactor the parser")
    off_loop(lambda: operations.enable(session.pk))
    chat = open_page(root, session)
    release = hold_the_first(chat, "**/panel/**", answered_now=True)
    off_loop(lambda: services.settings_store().save(handoff_ratio=0.6))
    chat.wait_for_function("() => window.__events.length === 1")
    off_loop(lambda: services.settings_store().save(auto_handoff=True))
    chat.wait_for_function("() => window.__events.length === 2")
    release()  # the held answer, read before the switch went on

    chat.get_by_text("The global switch is off").wait_for(state="detached")
    assert chat.problems == []


def test_a_stale_save_of_one_field_is_refused_and_shows_the_current_value(make_user, open_page):
    root = make_user("root", staff=True)
    first, second = open_page(root, path="/settings/"), open_page(root, path="/settings/")
    type_setting(second, "handoff_ratio", "0.5", leave=False)  # being edited, not saved yet

    type_setting(first, "handoff_ratio", "0.6")
    first.locator("#setting-handoff_ratio").get_by_text("Saved").wait_for()
    second.wait_for_function("() => window.__events.some((e) => e.kind === 'settings.changed')")
    second.locator("#id_handoff_ratio").press("Tab")

    refused = second.locator("#setting-handoff_ratio .field-error")
    refused.wait_for()
    assert "Changed meanwhile" in refused.inner_text()
    assert second.locator("#id_handoff_ratio").input_value() == "0.6"
    assert HandoffSettings.objects.get(pk=1).handoff_ratio == 0.6


def test_a_field_being_saved_keeps_its_new_value_when_another_change_arrives(make_user, open_page):
    """A settings change made elsewhere arrives while this tab's save of another field is in
    flight: the field keeps the value being saved, and its answer shows "Saved"."""
    root = make_user("root", staff=True)
    card = open_page(root, path="/settings/")
    release = hold_the_first(card, "**/field/handoff_min_turns/", answered_now=False)
    type_setting(card, "handoff_min_turns", "6")

    off_loop(lambda: services.settings_store().save(handoff_ratio=0.6))
    card.wait_for_function("() => document.getElementById('id_handoff_ratio').value === '0.6'")
    assert card.locator("#id_handoff_min_turns").input_value() == "6"
    release()

    card.locator("#setting-handoff_min_turns").get_by_text("Saved").wait_for()
    assert card.locator("#id_handoff_min_turns").input_value() == "6"
    stored = HandoffSettings.objects.get(pk=1)
    assert (stored.handoff_ratio, stored.handoff_min_turns) == (0.6, 6)
    assert card.problems == []


def test_two_fields_saved_from_two_tabs_both_land(make_user, open_page):
    root = make_user("root", staff=True)
    first, second = open_page(root, path="/settings/"), open_page(root, path="/settings/")

    type_setting(first, "handoff_ratio", "0.6")
    type_setting(second, "handoff_min_turns", "6")

    first.locator("#setting-handoff_ratio").get_by_text("Saved").wait_for()
    second.locator("#setting-handoff_min_turns").get_by_text("Saved").wait_for()
    first.wait_for_function("() => document.getElementById('id_handoff_min_turns').value === '6'")
    second.wait_for_function("() => document.getElementById('id_handoff_ratio').value === '0.6'")
    stored = HandoffSettings.objects.get(pk=1)
    assert (stored.handoff_ratio, stored.handoff_min_turns) == (0.6, 6)


def test_the_banner_and_a_new_message_arrive_in_the_other_tab_without_a_request(
    make_user, open_page
):
    """Events carry the change (docs/design.md, Events carry the change): the other tab sends no
    HTTP request while a message arrives and the conversation is handed off but the one for its
    move, the successor's page, asked for ahead when the route commits (its successor does not start
    here, so the tab stays on the banner: the retry rule waits a minute in this test)."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    writer = open_page(ada, source)
    reader = open_page(ada, source, config={"retryInterval": 60_000})
    requests: list[str] = []
    reader.on("request", lambda r: requests.append(r.url))

    writer.locator("#composer textarea").fill("Please also cover the lexer")
    writer.locator("#composer").get_by_role("button", name="Send").click()
    reader.locator("#timeline").get_by_text("Please also cover the lexer", exact=True).wait_for()
    reader.locator("#working").wait_for()
    answer(source)
    reader.locator("#working").wait_for(state="hidden")
    assert reader.locator("#timeline .msg-assistant").count() == 2
    successor = hand_off(source, start=False)
    banner = reader.get_by_text("This conversation continues in")
    banner.wait_for()

    assert banner.get_by_role("link").get_attribute("href") == f"/s/{successor.pk}/"
    typed = reader.locator("#timeline").get_by_text("Please also cover the lexer", exact=True)
    assert typed.count() == 1
    assert [urlsplit(url)[2:4] for url in requests] == [(f"/s/{successor.pk}/", "followed=1")]
    assert reader.problems == []


def test_tabs_following_one_move_read_one_render_and_keep_their_own_composer(make_user, open_page):
    """The tabs on a handed-off source ask for the successor marked as followed (follower.js):
    the browser reads one render of it for all of them (common/caching.py), so no tab waits for
    another tab's page render (Chromium's cache otherwise sends them one after the other). The page
    comes in place, without a page load (the tab keeps its window); each shows the plain address,
    and each composer posts as its own tab."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    tabs = [open_page(ada, source), open_page(ada, source)]
    answers: list[dict[str, Any]] = []
    for tab in tabs:
        tab.evaluate("window.__sameWindow = true")
        devtools = tab.context.new_cdp_session(tab)
        devtools.send("Network.enable")
        devtools.on("Network.responseReceived", lambda event: answers.append(event))

    successor = hand_off(source)

    for tab in tabs:
        tab.wait_for_url(f"**/s/{successor.pk}/")
        tab.locator("#timeline").wait_for()
        assert tab.locator("h1.conv-title").inner_text() == successor.title
    opened = [a for a in answers if f"/s/{successor.pk}/?followed=1" in a["response"]["url"]]
    # One answer came over the network; the other tab read the same one (no bytes received).
    assert sorted(a["response"]["encodedDataLength"] > 0 for a in opened) == [False, True]
    assert len({a["response"]["responseTime"] for a in opened}) == 1
    assert {a["type"] for a in opened} == {"Fetch"}
    assert all(tab.evaluate("window.__sameWindow === true") for tab in tabs)
    assert all(tab.title() == f"{successor.title} · Session Handoff" for tab in tabs)
    composers = [t.locator('#composer input[name="client_id"]').input_value() for t in tabs]
    assert composers[0] != composers[1]
    assert all(tab.problems == [] for tab in tabs)


def test_a_successor_brought_in_place_follows_its_own_events_and_back_loads_the_source(
    make_user, open_page
):
    """After the move the page is the successor's in every way: its events reach it (the
    agent's answer on the brief appears), and Back loads the source's page for real."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)

    successor = hand_off(source)
    tab.wait_for_url(f"**/s/{successor.pk}/")
    tab.evaluate("window.__sameWindow = true")
    reply = "Picking up from the brief."
    off_loop(
        lambda: log.append_message(
            successor, role="assistant", source_kind="assistant", content=reply
        )
    )
    tab.locator("#timeline").get_by_text(reply).wait_for()

    tab.go_back()
    tab.wait_for_url(f"**/s/{source.pk}/")
    tab.locator(".conv-title", has_text="Refactor the parser").wait_for()
    assert tab.evaluate("window.__sameWindow") is None
    assert tab.problems == []


def test_a_successor_brought_in_place_in_a_tab_that_draws_no_frames_still_follows(
    make_user, open_page
):
    """The successor's socket opens once its first frame is drawn (follower.js): a tab that
    draws none, as a hidden tab, opens it all the same, and the agent's answer reaches it."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)
    tab.evaluate("window.requestAnimationFrame = () => 0")

    successor = hand_off(source)
    tab.wait_for_url(f"**/s/{successor.pk}/")
    reply = "Picking up from the brief."
    off_loop(
        lambda: log.append_message(
            successor, role="assistant", source_kind="assistant", content=reply
        )
    )
    tab.locator("#timeline").get_by_text(reply).wait_for()
    assert tab.problems == []


def test_the_successor_is_asked_for_when_its_route_commits_and_shown_once_it_starts(
    make_user, open_page
):
    """The successor's page holds its brief from the route's commit on: the tab asks for it
    then (follower.ahead), stays while the successor is not started, and brings that answer
    in once it starts, without asking again; the page replays the start (invariant 10)."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)
    asked: list[str] = []
    tab.on("request", lambda r: asked.append(r.url) if "followed=1" in r.url else None)

    successor = hand_off(source, start=False)
    for _ in range(50):
        if asked:
            break
        tab.wait_for_timeout(100)
    assert asked == [f"{tab.url.split('/s/')[0]}/s/{successor.pk}/?followed=1"]
    # nothing-happens: the retry rule looks every 100 ms (retryInterval) for a started row.
    tab.wait_for_timeout(300)
    assert tab.url.endswith(f"/s/{source.pk}/")

    off_loop(lambda: SessionController().start(successor))

    tab.wait_for_url(f"**/s/{successor.pk}/")
    tab.locator("#timeline").wait_for()
    tab.locator("#working").wait_for()
    assert len(asked) == 1
    assert tab.problems == []


def test_a_tab_moved_from_an_untitled_conversation_says_so(make_user, open_page):
    """The moved-from name of a conversation that had no title reads "Untitled conversation",
    as its heading did, not empty quotes."""
    ada = make_user("ada")
    untitled = conversation(ada, "")
    tab = open_page(ada, untitled)

    successor = hand_off(untitled)

    tab.wait_for_url(f"**/s/{successor.pk}/")
    tab.wait_for_function(
        "document.getElementById('follow-moved')?.textContent"
        " === 'Moved here from “Untitled conversation”.'"
    )
    assert tab.problems == []


def test_a_tab_waiting_for_the_start_holds_the_sources_last_changes_and_moves_without_them(
    make_user, open_page
):
    """From the summary's "prepared" to the successor's start the source's tab is about to be
    left: it holds what the events change (the route's rename, the handoff notice, the panel)
    instead of laying its long log out again (follower.hold), and moves without them
    when the start comes; a tab whose start is late shows them once its hold ends."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    waiting = open_page(ada, source, config={"holdLimit": 60_000, "retryInterval": 60_000})
    late = open_page(ada, source, config={"holdLimit": 300, "retryInterval": 60_000})

    successor = hand_off(source, start=False)

    late.locator("#timeline").get_by_text("Handed off to").wait_for()
    late.locator(".conv-title", has_text="接续").wait_for()
    waiting.wait_for_function("() => document.documentElement.dataset.handoffJump === 'waiting'")
    assert waiting.locator("#timeline").get_by_text("Handed off to").count() == 0
    # The route renamed the source in the burst before its redirect: held from "prepared" on.
    assert waiting.locator(".conv-title").inner_text() == "Refactor the parser"
    off_loop(lambda: SessionController().start(successor))
    waiting.wait_for_url(f"**/s/{successor.pk}/")
    waiting.locator("#working").wait_for()
    assert waiting.problems == [] and late.problems == []


def test_a_successor_that_cannot_come_in_place_is_opened_by_navigation(make_user, open_page):
    """When the page cannot be fetched in place (here the browser refuses the fetch), the tab
    opens the successor by navigation, as before."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    tab = open_page(ada, source)
    tab.route(
        "**/*followed=1*",
        lambda route: (
            route.abort() if route.request.resource_type == "fetch" else route.continue_()
        ),
    )

    successor = hand_off(source)

    tab.wait_for_url(f"**/s/{successor.pk}/")
    tab.locator("#timeline").wait_for()
    assert tab.evaluate("follower.state().followed") is True
    assert tab.locator(".conv-title").inner_text() == successor.title


def test_a_tab_whose_page_never_comes_opens_the_successor_by_navigation(make_user, open_page):
    """Three tabs on the source; one is half-open: its socket hears the events, but the page it
    asks for never answers (its connection died without a FIN). Its fetch gives up after
    ``fetchTimeout`` ms (follower.js) and the tab opens the successor by navigation; the
    healthy tabs bring it in place as before."""
    ada = make_user("ada")
    source = conversation(ada, "Refactor the parser")
    healthy = [open_page(ada, source), open_page(ada, source)]
    half_open = open_page(ada, source)
    unanswered: list[Any] = []
    half_open.route(
        "**/*followed=1*",
        lambda route: (
            unanswered.append(route)
            if route.request.resource_type == "fetch"
            else route.continue_()
        ),
    )
    tabs = [*healthy, half_open]
    for tab in tabs:
        tab.evaluate("window.__sameWindow = true")

    successor = hand_off(source)

    for tab in tabs:
        tab.wait_for_url(f"**/s/{successor.pk}/")
        tab.locator("#timeline").wait_for()
        assert tab.locator(".conv-title").inner_text() == successor.title
    assert unanswered
    assert [tab.evaluate("window.__sameWindow") for tab in tabs] == [True, True, None]
    assert all(tab.problems == [] for tab in tabs)


def test_the_first_message_titles_the_conversation_in_every_tab_without_a_request(
    make_user, open_page
):
    """An untitled conversation takes the title of its first message (host.intake): the other
    tab's heading shows it from the event (the heading is one of its fragments), no request."""
    ada = make_user("ada")
    untitled = off_loop(lambda: create_session(ada, cwd="/work/demo"))
    writer, reader = open_page(ada, untitled), open_page(ada, untitled)
    assert reader.locator("h1.conv-title").inner_text() == "Untitled conversation"
    requests: list[str] = []
    reader.on("request", lambda r: requests.append(r.url))

    writer.locator("#composer textarea").fill("Port the lexer to Rust")
    writer.locator("#composer").get_by_role("button", name="Send").click()

    reader.locator("h1.conv-title", has_text="Port the lexer to Rust").wait_for()
    writer.locator("h1.conv-title", has_text="Port the lexer to Rust").wait_for()
    assert requests == []
    assert reader.problems == []


def test_the_tab_title_follows_the_conversations_title_without_a_reload(make_user, open_page):
    """The heading's fragment brings the tab title too (chat/_conv_title.html): a renamed
    conversation's tab shows its new name at once, no request; another conversation's keeps its
    own."""
    ada = make_user("ada")
    untitled = off_loop(lambda: create_session(ada, cwd="/work/demo"))
    other = conversation(ada, "Refactor the parser")
    page, elsewhere = open_page(ada, untitled), open_page(ada, other)
    assert page.title() == "Untitled conversation · Session Handoff"
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))

    off_loop(lambda: SessionController().rename(untitled, "Port the lexer to Rust"))

    page.wait_for_function("() => document.title === 'Port the lexer to Rust · Session Handoff'")
    assert page.locator("h1.conv-title").inner_text() == "Port the lexer to Rust"
    elsewhere.wait_for_function(
        "() => window.__events.some((e) => e.payload.session?.title === 'Port the lexer to Rust')"
    )
    assert elsewhere.title() == "Refactor the parser · Session Handoff"
    assert requests == []
    assert page.problems == [] and elsewhere.problems == []


def test_a_reader_at_the_end_follows_new_entries_and_one_scrolled_up_stays(make_user, open_page):
    """The log opens at its end and follows entries that events bring while the reader is there;
    a reader who scrolled up to older messages is left where they are (static/app.js)."""
    ada = make_user("ada")
    session = conversation(ada, "A long talk")

    def lengthen() -> None:
        for n in range(30):
            log.append_message(session, role="user", source_kind="user", content=f"Point {n}")

    off_loop(lengthen)
    page = open_page(ada, session)
    at_end = (
        "() => { const m = document.querySelector('.main');"
        " return m.scrollHeight - m.scrollTop - m.clientHeight < 80; }"
    )
    assert page.evaluate(at_end)

    off_loop(lambda: log.append_message(session, role="user", source_kind="user", content="New"))
    page.locator("#timeline").get_by_text("New", exact=True).wait_for()
    page.wait_for_function(at_end)

    page.evaluate("document.querySelector('.main').scrollTop = 0")
    page.wait_for_function("() => document.querySelector('.main').scrollTop === 0")
    off_loop(lambda: log.append_message(session, role="user", source_kind="user", content="Newer"))
    page.locator("#timeline").get_by_text("Newer", exact=True).wait_for()
    page.wait_for_timeout(200)
    assert page.evaluate("document.querySelector('.main').scrollTop") == 0
    assert page.problems == []
