"""Two tabs on a followed Claude Code session's page move to its successor by themselves once
the handoff commits and the successor starts (the follower opens a started successor, never a
blank one: docs/spec.md, Follower). ``now`` leaves the brief ``prepared`` (docs/design.md,
Handing off a terminal session through its hooks); then either a scripted runtime posts the
documented payloads of ``/clear`` (``SessionEnd(clear)``, ``SessionStart(clear)``, the
acknowledgement) and its successor's first turn, or, without hooks, ``follow_sessions``
imports a new log whose first user record carries the marker.

The tabs need the follower's websocket, so they run on Daphne (``open_page``, ``asgi_site``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgi_site import off_loop
from django.test import Client

from handoff import operations
from handoff.core.phases import Phase
from handoff.core.terminal import marker
from handoff.models import HandoffRecord
from host.auth import issue_token
from host.importers.live import follow_step
from host.models import Session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = "3f1c2a9e-7b4d-4e8a-9c21-5d6f0e1b2a34"
SUCCESSOR = "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d"
FIXTURES = Path(__file__).parent.parent / "agent_hooks" / "fixtures" / "claude"


def write_turn(log: Path, key: str, prompt: str, index: int) -> None:
    """Append one prompt and its answer as Claude Code 2.1 logs them."""
    base = {"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/home/user/my-project", "sessionId": key, "version": "2.1.42"}  # fmt: skip
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 200,
             "cache_read_input_tokens": 30_000, "output_tokens": 120}  # fmt: skip
    lines = [
        base | {"type": "user", "uuid": f"{key[:8]}-u{index}",
                "timestamp": f"2026-12-04T18:00:{index:02d}.000Z",
                "message": {"role": "user", "content": prompt}},
        base | {"type": "assistant", "uuid": f"{key[:8]}-a{index}",
                "timestamp": f"2026-12-04T18:00:{index:02d}.500Z",
                "requestId": f"req_{key[:8]}_{index}",
                "message": {"id": f"msg_{key[:8]}_{index}", "type": "message",
                            "role": "assistant", "model": "claude-opus-4-6",
                            "content": [{"type": "text", "text": f"Done {index}."}],
                            "stop_reason": "end_turn", "stop_sequence": None,
                            "usage": usage}},
    ]  # fmt: skip
    with log.open("a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def prepared_source(owner: Any, folder: Path) -> tuple[Path, Session, HandoffRecord]:
    """A followed session of four turns logged in ``folder``, ``now`` asked: its brief waits
    ``prepared``."""
    log = folder / f"{SOURCE}.jsonl"
    for index in range(4):
        write_turn(log, SOURCE, f"Step {index} of the work.", index)
    off_loop(lambda: follow_step(log, owner, settle=True))
    source = Session.objects.get(owner=owner, external_id=SOURCE)
    outcome = off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    record = HandoffRecord.objects.get(source=source)
    assert record.phase == Phase.PREPARED, outcome.detail
    return log, source, record


def hook(client: Client, name: str, log: Path, key: str) -> None:
    """Post the documented payload ``name`` for session ``key`` as the hook command does, and
    acknowledge an answer that asks for it."""
    payload = json.loads((FIXTURES / f"{name}.json").read_text())
    payload |= {"session_id": key, "transcript_path": str(log), "cwd": "/home/user/my-project"}
    delivery = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{key}:{name}"))
    headers = {"X-Hook-Delivery": delivery, "X-Hook-Process": "4242"}
    answer = client.post(
        "/api/hooks/claude", payload, content_type="application/json", headers=headers
    )
    assert answer.status_code == 200, answer.content
    if answer.json()["ack"]:
        acked = client.post(
            "/api/hooks/claude/ack", {"delivery": delivery}, content_type="application/json"
        )
        assert acked.status_code == 204, acked.content


def test_two_tabs_move_to_the_successor_clear_opened(
    make_user: Callable[..., Any],
    open_page: Callable[..., Any],
    tmp_path: Path,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.AGENT_HOOKS_BRIEF_DIR = tmp_path / "briefs"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    logs = tmp_path / "claude" / "projects" / "-home-user-my-project"  # where hooks may read
    logs.mkdir(parents=True)
    ada = make_user("ada")
    log, source, record = prepared_source(ada, logs)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {off_loop(lambda: issue_token(ada))}")
    first, second = open_page(ada, source), open_page(ada, source)

    fresh = logs / f"{SUCCESSOR}.jsonl"
    off_loop(lambda: hook(client, "session_end_clear", log, SOURCE))
    off_loop(lambda: hook(client, "session_start_clear", fresh, SUCCESSOR))
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED, record.error
    assert first.url.endswith(f"/s/{source.pk}/")  # its successor not started yet
    write_turn(fresh, SUCCESSOR, "Go on.", 0)  # its first turn, then its Stop
    off_loop(lambda: hook(client, "stop", fresh, SUCCESSOR))
    record.refresh_from_db()
    assert record.phase == Phase.STARTED, record.error
    for page in (first, second):
        page.wait_for_url(f"**/s/{record.target_id}/")


def test_two_tabs_move_to_the_successor_the_marker_claimed(
    make_user: Callable[..., Any], open_page: Callable[..., Any], tmp_path: Path, settings: Any
) -> None:
    settings.AGENT_HOOKS_BRIEF_DIR = tmp_path / "briefs"
    ada = make_user("ada")
    _, source, record = prepared_source(ada, tmp_path)
    first, second = open_page(ada, source), open_page(ada, source)

    fresh = tmp_path / f"{SUCCESSOR}.jsonl"
    write_turn(fresh, SUCCESSOR, f"Continue the handed-off work {marker(record.pk)}.", 0)
    off_loop(lambda: follow_step(fresh, ada, settle=True))
    record.refresh_from_db()
    assert record.phase == Phase.STARTED, record.error
    successor = Session.objects.get(owner=ada, external_id=SUCCESSOR)
    for page in (first, second):
        page.wait_for_url(f"**/s/{successor.pk}/")
