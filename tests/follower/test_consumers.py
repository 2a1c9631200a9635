"""The follower websocket at /ws/follow/ (docs/spec.md, Follower rules)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any
from unittest import mock

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.sessions.models import Session as DjangoSession
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from psycopg_pool import ConnectionPool
from published import publish_phases

from follower import events
from follower import hub as hub_module
from follower.consumers import UNAUTHENTICATED, FollowConsumer
from follower.events import current_event_id

pytestmark = pytest.mark.django_db(transaction=True)

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
SAME_SITE = [(b"origin", b"http://testserver"), (b"host", b"testserver")]


@pytest.fixture(autouse=True)
def quiet_layer(settings: Any) -> None:
    """The in-memory layer, and no reading of stored events unless a test turns it on."""
    settings.CHANNEL_LAYERS = IN_MEMORY
    settings.FOLLOWER_POLL_INTERVAL = 0


def socket(user: Any) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(FollowConsumer.as_asgi(), "/ws/follow/")
    communicator.scope["user"] = user
    return communicator


@pytest.fixture
async def ada_socket(ada: AbstractBaseUser) -> AsyncIterator[WebsocketCommunicator]:
    communicator = socket(ada)
    connected, _ = await communicator.connect()
    assert connected
    yield communicator
    await communicator.disconnect()


async def emit(user: AbstractBaseUser, phase: str = "summarizing") -> dict[str, Any]:
    (frame,) = await database_sync_to_async(publish_phases)(user.pk, phase)
    return frame


async def hello(communicator: WebsocketCommunicator, last: int | None) -> None:
    await communicator.send_json_to({"type": "hello", "last_event_id": last})


# --- connecting ------------------------------------------------------------------------------


async def test_anonymous_socket_is_closed_4401():
    communicator = socket(AnonymousUser())
    await communicator.connect()
    assert await communicator.receive_output() == {
        "type": "websocket.close",
        "code": UNAUTHENTICATED,
    }


async def test_hello_without_id_answers_ready_with_the_newest_id(ada, ada_socket):
    await emit(ada)
    await emit(ada)
    await hello(ada_socket, None)
    assert await ada_socket.receive_json_from() == {"type": "ready", "last_event_id": 2}
    assert await ada_socket.receive_nothing()


async def test_nothing_is_sent_before_hello(ada, ada_socket):
    await emit(ada)
    assert await ada_socket.receive_nothing()


async def test_event_after_ready_is_sent_once(ada, ada_socket):
    await hello(ada_socket, None)
    await ada_socket.receive_json_from()
    frame = await emit(ada, "prepared")
    assert await ada_socket.receive_json_from() == frame
    assert frame["payload"] == {"phase": "prepared"}
    assert await ada_socket.receive_nothing()


async def test_second_user_receives_nothing_of_the_first(ada, bob, ada_socket):
    bob_socket = socket(bob)
    await bob_socket.connect()
    await hello(bob_socket, None)
    await hello(ada_socket, None)
    assert await bob_socket.receive_json_from() == {"type": "ready", "last_event_id": 0}
    await ada_socket.receive_json_from()
    await emit(ada)
    assert (await ada_socket.receive_json_from())["id"] == 1
    assert await bob_socket.receive_nothing()
    await bob_socket.disconnect()


async def test_through_the_asgi_application_a_logged_in_user_follows(ada):
    """The real stack: origin check, session cookie, auth middleware, URL routing."""
    from config.asgi import application

    client = Client()
    await database_sync_to_async(client.force_login)(ada)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    communicator = WebsocketCommunicator(
        application,
        "/ws/follow/",
        headers=[(b"cookie", cookie.encode()), *SAME_SITE],
    )
    connected, _ = await communicator.connect()
    assert connected
    await hello(communicator, None)
    assert await communicator.receive_json_from() == {"type": "ready", "last_event_id": 0}
    await communicator.disconnect()


async def test_through_the_asgi_application_anonymous_is_closed_4401():
    from config.asgi import application

    communicator = WebsocketCommunicator(application, "/ws/follow/", headers=SAME_SITE)
    await communicator.connect()
    assert (await communicator.receive_output())["code"] == UNAUTHENTICATED


async def signed_in_socket(user: AbstractBaseUser) -> tuple[WebsocketCommunicator, Client]:
    """A socket through the whole stack with ``user``'s session cookie, past its ``ready``."""
    from config.asgi import application

    client = Client()
    await database_sync_to_async(client.force_login)(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    communicator = WebsocketCommunicator(
        application, "/ws/follow/", headers=[(b"cookie", cookie.encode()), *SAME_SITE]
    )
    await communicator.connect()
    await hello(communicator, None)
    await communicator.receive_json_from()
    return communicator, client


async def test_a_socket_whose_session_ended_is_closed_4401_at_the_next_event(ada):
    """The session row is gone (expired, flushed elsewhere): the event is not sent."""
    communicator, _ = await signed_in_socket(ada)
    await database_sync_to_async(DjangoSession.objects.all().delete)()
    await emit(ada)
    closed = await communicator.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": UNAUTHENTICATED}
    await communicator.wait()


async def test_signing_out_closes_that_sign_ins_sockets_4401_at_once(ada):
    """Signed out (another user may sign in on that browser next): no event needed."""
    communicator, client = await signed_in_socket(ada)
    other, _ = await signed_in_socket(ada)
    await database_sync_to_async(client.logout)()
    closed = await communicator.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": UNAUTHENTICATED}
    assert await other.receive_nothing()
    frame = await emit(ada)
    assert await other.receive_json_from() == frame
    await communicator.wait()
    await other.disconnect()


@pytest.mark.parametrize(("named", "accepted"), [("own", True), ("other", False), (None, True)])
async def test_a_page_names_its_user_and_another_users_page_is_refused(ada, bob, named, accepted):
    """``?user=`` is the user the page was rendered for; bob signed in on ada's page: 4401."""
    user = {"own": ada, "other": bob, None: None}[named]
    path = "/ws/follow/" if user is None else f"/ws/follow/?user={user.pk}"
    communicator = WebsocketCommunicator(FollowConsumer.as_asgi(), path)
    communicator.scope["user"] = ada
    await communicator.connect()
    if accepted:
        await hello(communicator, None)
        assert (await communicator.receive_json_from())["type"] == "ready"
        await communicator.disconnect()
    else:
        assert (await communicator.receive_output())["code"] == UNAUTHENTICATED


# --- reconnecting ----------------------------------------------------------------------------


async def test_hello_with_last_id_replays_the_missed_events_then_ready(ada, ada_socket):
    for phase in ("summarizing", "prepared", "committed"):
        await emit(ada, phase)
    await hello(ada_socket, 1)
    replayed = [await ada_socket.receive_json_from() for _ in range(2)]
    assert [(f["id"], f["payload"]["phase"]) for f in replayed] == [
        (2, "prepared"),
        (3, "committed"),
    ]
    assert await ada_socket.receive_json_from() == {"type": "ready", "last_event_id": 3}
    frame = await emit(ada, "started")
    assert await ada_socket.receive_json_from() == frame


async def test_hello_with_pruned_events_answers_resync(ada, ada_socket, settings):
    settings.FOLLOWER_EVENT_LIMIT = 1
    for _ in range(3):
        await emit(ada)
    await hello(ada_socket, 1)
    assert await ada_socket.receive_json_from() == {"type": "resync", "last_event_id": 3}
    assert await ada_socket.receive_nothing()
    assert (await emit(ada))["id"] == 4
    assert (await ada_socket.receive_json_from())["id"] == 4


async def test_hello_with_an_id_from_the_future_answers_resync(ada, ada_socket):
    await emit(ada)
    await hello(ada_socket, 7)
    assert await ada_socket.receive_json_from() == {"type": "resync", "last_event_id": 1}


async def test_a_gap_in_the_group_messages_is_filled_from_storage(ada, ada_socket):
    await hello(ada_socket, None)
    await ada_socket.receive_json_from()
    with mock.patch.object(events, "_send"):
        await emit(ada, "summarizing")
    await emit(ada, "prepared")
    received = [await ada_socket.receive_json_from() for _ in range(2)]
    assert [f["id"] for f in received] == [1, 2]
    assert await ada_socket.receive_nothing()


async def test_a_repeated_group_message_is_not_sent_twice(ada, ada_socket):
    await hello(ada_socket, None)
    await ada_socket.receive_json_from()
    frame = await emit(ada)
    await ada_socket.receive_json_from()
    await database_sync_to_async(events._send)(ada.pk, frame)
    assert await ada_socket.receive_nothing()


async def polled_socket(user: AbstractBaseUser, settings: Any) -> WebsocketCommunicator:
    """A connected socket on a hub that reads stored events every 0.05 s."""
    settings.FOLLOWER_POLL_INTERVAL = 0.05
    communicator = socket(user)
    assert (await communicator.connect())[0]
    return communicator


async def test_events_from_another_process_arrive_through_the_process_reader(ada, settings):
    """An event stored without a group message (another process, in-memory layer)."""
    communicator = await polled_socket(ada, settings)
    await hello(communicator, None)
    await communicator.receive_json_from()
    with mock.patch.object(events, "_send"):
        frame = await emit(ada)
    assert await communicator.receive_json_from(timeout=2) == frame
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_after_a_resync_events_from_another_process_still_arrive(ada, settings):
    settings.FOLLOWER_EVENT_LIMIT = 1
    for _ in range(3):
        await emit(ada)
    communicator = await polled_socket(ada, settings)
    await hello(communicator, 1)
    assert await communicator.receive_json_from() == {"type": "resync", "last_event_id": 3}
    with mock.patch.object(events, "_send"):
        frame = await emit(ada)
    assert await communicator.receive_json_from(timeout=2) == frame
    await communicator.disconnect()


async def test_idle_sockets_cost_at_most_one_read_per_tick_whatever_their_count(ada, settings):
    """The process's one reader asks for every local user at once; sockets never read (on
    SQLite it reads only when the database changed, or every ten intervals)."""
    reads: list[list[int]] = []
    real = hub_module._newest_ids

    def counted(user_ids: list[int]) -> dict[int, int]:
        reads.append(list(user_ids))
        return real(user_ids)

    sockets = [await polled_socket(ada, settings) for _ in range(20)]
    for communicator in sockets:
        await hello(communicator, None)
        await communicator.receive_json_from()
    with (
        mock.patch.object(hub_module, "_newest_ids", counted),
        mock.patch.object(events, "events_after", side_effect=AssertionError("a socket read")),
    ):
        await asyncio.sleep(0.5)
    assert len(reads) <= 12
    assert all(user_ids == [ada.pk] for user_ids in reads)
    for communicator in sockets:
        await communicator.disconnect()


async def test_one_event_reaches_every_socket_with_one_sign_in_check(ada):
    sockets = [(await signed_in_socket(ada))[0] for _ in range(3)]
    with mock.patch.object(
        hub_module, "_still_signed_in", wraps=hub_module._still_signed_in
    ) as checked:
        frame = await emit(ada)
        for communicator in sockets:
            assert await communicator.receive_json_from() == frame
    assert checked.call_count == 1
    for communicator in sockets:
        await communicator.disconnect()


async def test_the_sign_in_check_of_five_browsers_is_one_read(ada):
    """Each browser of the user has a sign-in of its own; the check before a delivery reads
    them together, not one read per browser."""
    sockets = [(await signed_in_socket(ada))[0] for _ in range(5)]
    reads: list[int] = []
    real = hub_module._still_signed_in

    def counted(user_id: int, keys: set[str]) -> set[str]:
        with CaptureQueriesContext(connection) as captured:  # in the hub's thread
            signed_in = real(user_id, keys)
        reads.append(len(captured))
        return signed_in

    with mock.patch.object(hub_module, "_still_signed_in", counted):
        frame = await emit(ada)
        for communicator in sockets:
            assert await communicator.receive_json_from() == frame
    assert reads == [1]
    for communicator in sockets:
        await communicator.disconnect()


async def test_events_that_come_during_a_delivery_go_out_together_with_one_sign_in_check(
    ada, publish_burst
):
    """A burst (a handoff's route publishes four events in one transaction) that arrives while
    the hub delivers the event before it costs one more sign-in check, not one per event."""
    sockets = [(await signed_in_socket(ada))[0] for _ in range(3)]
    checking, release = threading.Event(), threading.Event()
    real = hub_module._still_signed_in

    def held(user_id: int, keys: set[str]) -> set[str]:
        checking.set()
        release.wait(10)
        return real(user_id, keys)

    with mock.patch.object(hub_module, "_still_signed_in", side_effect=held) as checked:
        first = await emit(ada)
        await sync_to_async(checking.wait, thread_sensitive=False)(10)
        burst = await database_sync_to_async(publish_burst)(ada.pk)
        while hub_module.hub().inbox.qsize() < 1:  # the burst is numbered and sent as one
            await asyncio.sleep(0.01)
        release.set()
        for communicator in sockets:
            received = [await communicator.receive_json_from() for _ in range(5)]
            assert received == [first, *burst]
    assert checked.call_count == 2
    for communicator in sockets:
        await communicator.disconnect()


async def test_an_event_reaches_the_page_while_page_requests_hold_the_shared_thread(ada):
    """Sync views (a herd of page refreshes) run on asgiref's one shared thread; the hub's
    sign-in check does not queue behind them."""
    communicator, _ = await signed_in_socket(ada)
    release = threading.Event()
    busy = asyncio.ensure_future(sync_to_async(release.wait, thread_sensitive=True)(10))
    try:
        (frame,) = await sync_to_async(publish_phases, thread_sensitive=False)(
            ada.pk, "summarizing"
        )
        assert await communicator.receive_json_from(timeout=3) == frame
        assert not busy.done()
    finally:
        release.set()
        await busy
    await communicator.disconnect()


@pytest.mark.postgres
async def test_an_event_reaches_the_page_while_page_requests_hold_every_pooled_connection(ada):
    """Page renders (many browsers loading a page at once) hold the process's pool: the hub's
    sign-in check before the delivery has a connection of its own and does not wait."""
    communicator, _ = await signed_in_socket(ada)
    connected, go, done, frames = threading.Event(), threading.Event(), threading.Event(), []

    def publisher() -> None:  # a request that had its connection before the herd came
        connection.ensure_connection()
        connected.set()
        go.wait(10)
        frames.extend(publish_phases(ada.pk, "summarizing"))
        done.wait(10)  # a request gives its connection back only once answered
        connection.close()

    thread = threading.Thread(target=publisher)
    thread.start()
    await sync_to_async(connected.wait, thread_sensitive=False)(10)
    postgresql: Any = connection  # only PostgreSQL's DatabaseWrapper has a pool
    pool: ConnectionPool = postgresql.pool
    held = []
    try:
        while not _exhausted(pool.get_stats()):
            held.append(pool.getconn(timeout=10))
        go.set()
        while not frames:
            await asyncio.sleep(0.01)
        assert await communicator.receive_json_from(timeout=3) == frames[0]
    finally:
        go.set()
        done.set()
        for raw in held:
            pool.putconn(raw)
        await sync_to_async(thread.join, thread_sensitive=False)(10)
    await communicator.disconnect()


def _exhausted(stats: dict[str, int]) -> bool:
    """Whether a psycopg pool's statistics say it is at its largest with none available."""
    return stats["pool_size"] == stats["pool_max"] and not stats.get("pool_available")


async def test_ping_is_answered_with_pong(ada_socket):
    await ada_socket.send_json_to({"type": "ping"})
    assert await ada_socket.receive_json_from() == {"type": "pong", "last_event_id": None}


async def test_a_hello_said_again_on_an_open_socket_sends_nothing_already_sent(ada, ada_socket):
    """The page said hello again while events were on their way: none is sent twice."""
    await hello(ada_socket, None)
    ready = await ada_socket.receive_json_from()
    frames = [await emit(ada), await emit(ada)]
    assert [await ada_socket.receive_json_from() for _ in frames] == frames
    await hello(ada_socket, ready["last_event_id"])
    assert await ada_socket.receive_json_from() == {
        "type": "ready",
        "last_event_id": frames[-1]["id"],
    }


async def test_a_pong_tells_the_page_of_an_event_the_layer_lost_and_hello_replays_it(
    ada, ada_socket
):
    """An event committed in this process whose send the channel layer lost (Redis restarted or
    paused): the heartbeat's answer carries its id, so the page says hello again."""
    await hello(ada_socket, None)
    ready = await ada_socket.receive_json_from()
    with mock.patch.object(events, "_send"):
        frame = await emit(ada)
    assert await ada_socket.receive_nothing()
    await ada_socket.send_json_to({"type": "ping"})
    assert await ada_socket.receive_json_from() == {"type": "pong", "last_event_id": frame["id"]}
    await hello(ada_socket, ready["last_event_id"])
    assert await ada_socket.receive_json_from() == frame


# --- bad frames ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1, 2]",
        '"hello"',
        '{"type": "subscribe", "last_event_id": null}',
        '{"last_event_id": null}',
        '{"type": "hello"}',
        '{"type": "hello", "last_event_id": "3"}',
        '{"type": "hello", "last_event_id": -1}',
        '{"type": "hello", "last_event_id": true}',
        '{"type": "hello", "last_event_id": 1.5}',
    ],
)
async def test_bad_frame_gets_an_error_and_changes_nothing(ada, ada_socket, text):
    await emit(ada)
    await ada_socket.send_to(text_data=text)
    answer = await ada_socket.receive_json_from()
    assert answer["type"] == "error"
    assert answer["detail"]
    assert await ada_socket.receive_nothing()
    assert await database_sync_to_async(current_event_id)(ada.pk) == 1
    await hello(ada_socket, 0)
    assert (await ada_socket.receive_json_from())["id"] == 1


async def test_binary_frame_gets_an_error(ada_socket):
    await ada_socket.send_to(bytes_data=b"\x00\x01")
    assert (await ada_socket.receive_json_from())["type"] == "error"


@pytest.mark.parametrize(
    "text",
    ["[" * 2000 + "]" * 2000, '{"a":' * 1500 + "1" + "}" * 1500, " " * (1024 * 1024 + 1)],
    ids=["nested-2000", "nested-objects", "over-1-MiB"],
)
async def test_a_deep_or_huge_frame_gets_an_error_and_the_socket_keeps_working(
    ada, ada_socket, text
):
    await ada_socket.send_to(text_data=text)
    answer = await ada_socket.receive_json_from()
    assert answer["type"] == "error" and answer["detail"]
    await hello(ada_socket, None)
    assert (await ada_socket.receive_json_from())["type"] == "ready"
    frame = await emit(ada)
    assert await ada_socket.receive_json_from() == frame


# --- origin ----------------------------------------------------------------------------------


async def opened(user: AbstractBaseUser, headers: list[tuple[bytes, bytes]], scheme: str) -> bool:
    """Open a socket through the real ASGI application as ``user``; return if it was accepted."""
    from config.asgi import application

    client = Client()
    await database_sync_to_async(client.force_login)(user)
    cookie = (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())
    communicator = WebsocketCommunicator(application, "/ws/follow/", headers=[cookie, *headers])
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@pytest.mark.parametrize(
    ("origin", "host", "trusted", "accepted"),
    [
        ("http://testserver", "testserver", [], True),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", [], True),
        ("https://evil.example", "testserver", [], False),
        ("http://testserver.evil.example", "testserver", [], False),
        ("http://127.0.0.1:9999", "127.0.0.1:8000", [], False),
        ("null", "testserver", [], False),
        (None, "testserver", [], False),
        ("https://app.example.com", "internal:8000", ["https://*.example.com"], True),
        ("http://app.example.com", "internal:8000", ["https://*.example.com"], False),
    ],
)
async def test_only_the_sites_own_pages_open_the_socket_whatever_allowed_hosts_is(
    ada, settings, origin, host, trusted, accepted
):
    """``ALLOWED_HOSTS = ["*"]`` (the default) must not let another site's page in."""
    settings.ALLOWED_HOSTS = ["*"]
    settings.CSRF_TRUSTED_ORIGINS = trusted
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    assert await opened(ada, headers, "ws") is accepted


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "accepted"),
    [
        ("http://127.0.0.1:9999", "127.0.0.1:8000", "ws", False),
        ("http://127.0.0.1", "127.0.0.1:8000", "ws", False),
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),
        ("http://handoff.example.org", "handoff.example.org", "wss", False),
        ("https://handoff.example.org", "handoff.example.org", "wss", True),
        ("https://handoff.example.org:443", "handoff.example.org", "wss", True),
        ("http://handoff.example.org:80", "handoff.example.org", "ws", True),
        ("http://handoff.example.org", "handoff.example.org:80", "ws", True),
        ("http://handoff.example.org:8080", "handoff.example.org", "ws", False),
    ],
)
async def test_the_origin_must_match_the_sites_scheme_host_and_port(
    ada, settings, origin, host, scheme, accepted
):
    """Another application on the same host (another port) or the http page of an https site
    is refused with strict ``ALLOWED_HOSTS`` too; a default port may be left out."""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "handoff.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = []
    headers = [(b"host", host.encode()), (b"origin", origin.encode())]
    assert await opened(ada, headers, scheme) is accepted


@pytest.mark.parametrize(
    ("trusted", "origin", "accepted"),
    [
        (["https://app.example.com"], "https://app.example.com", True),
        (["https://app.example.com"], "https://app.example.com:443", True),
        (["https://app.example.com"], "https://app.example.com:8443", False),
        (["https://app.example.com"], "http://app.example.com", False),
        ([], "https://app.example.com", False),
    ],
)
async def test_behind_a_proxy_that_rewrites_host_the_trusted_origins_open_the_socket(
    ada, settings, trusted, origin, accepted
):
    """The proxy's public origin is in ``CSRF_TRUSTED_ORIGINS`` (as Django's CSRF check wants);
    an ``ALLOWED_HOSTS`` name alone opens nothing: it has no scheme or port."""
    settings.ALLOWED_HOSTS = ["app.example.com", "internal"]
    settings.CSRF_TRUSTED_ORIGINS = trusted
    headers = [(b"host", b"internal:8000"), (b"origin", origin.encode())]
    assert await opened(ada, headers, "ws") is accepted


async def test_a_tls_proxys_forwarded_scheme_makes_the_https_page_the_sites_own(ada, settings):
    settings.ALLOWED_HOSTS = ["handoff.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    page = (b"origin", b"https://handoff.example.org")
    headers = [(b"host", b"handoff.example.org"), page, (b"x-forwarded-proto", b"https")]
    assert await opened(ada, headers, "ws") is True
    assert await opened(ada, headers[:2], "ws") is False
