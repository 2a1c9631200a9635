"""A followed log's appended lines move the conversation's meter on every open tab
(``manage.py follow_sessions``: each appended batch publishes the follower's events).

The tabs need the follower's websocket, so they run on Daphne (``open_page``, ``asgi_site``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgi_site import off_loop
from playwright.sync_api import expect
from shared_files import SAMPLES

from host.importers.live import LIVE_ENTRIES, follow_step
from host.models import Session
from host.usage import context_tokens

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tokens(page: Any, session_id: Any) -> int:
    """The meter's token figure as the page shows it."""
    return int(page.locator(f"#handoff-meter-{session_id}").get_attribute("data-tokens"))


def test_appended_lines_move_the_meter_on_two_tabs(
    make_user: Callable[..., Any], open_page: Callable[..., Any], tmp_path: Path
) -> None:
    ada = make_user("ada")
    data = (SAMPLES / "codex-fork.jsonl").read_bytes()
    log = tmp_path / "rollout.jsonl"
    lines = data.splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:30]))
    off_loop(lambda: follow_step(log, ada, settle=True))
    session = Session.objects.get(owner=ada)
    first, second = open_page(ada, session), open_page(ada, session)
    before = tokens(first, session.pk)
    assert tokens(second, session.pk) == before

    for start in range(30, len(lines), 6):
        with log.open("ab") as handle:
            handle.write(b"".join(lines[start : start + 6]))
        off_loop(lambda: follow_step(log, ada, settle=True))
    session.refresh_from_db()
    final = context_tokens(session)
    assert final > before
    for page in (first, second):
        page.wait_for_function(
            "([id, want]) => Number(document.querySelector(`#handoff-meter-${id}`)"
            "?.dataset.tokens) === want",
            arg=[str(session.pk), final],
        )
        page.locator("#timeline").get_by_text("Retries are in skycast/fetch.py").first.wait_for()


def test_a_catch_up_past_live_entries_has_open_pages_read_their_log_again(
    make_user: Callable[..., Any], open_page: Callable[..., Any], tmp_path: Path
) -> None:
    """More lines than one event carries one by one (``LIVE_ENTRIES``) appended at once, as a
    follower finds after a stop: the open page reads its log again and shows the last line."""
    ada = make_user("ada")
    lines = (SAMPLES / "claude-code-2.x-epic.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:4]))
    off_loop(lambda: follow_step(log, ada, settle=True))
    session = Session.objects.get(owner=ada, parent=None)
    page = open_page(ada, session)
    with log.open("ab") as handle:
        handle.write(b"".join(lines[4:]))
    step = off_loop(lambda: follow_step(log, ada, settle=True))
    assert step.messages > LIVE_ENTRIES
    expect(page.locator("#timeline")).to_contain_text("Epic E-1 complete.")
