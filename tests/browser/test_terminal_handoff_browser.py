"""Two tabs on a followed Claude Code session's page move to its successor by themselves when
the handoff commits through the new-terminal path without hooks (docs/design.md, Handing off
a terminal session through its hooks: without hooks): ``now`` leaves the brief ``prepared``,
then ``follow_sessions`` imports a new log whose first user record carries the marker.

The tabs need the follower's websocket, so they run on Daphne (``open_page``, ``asgi_site``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgi_site import off_loop

from handoff import operations
from handoff.core.phases import Phase
from handoff.core.terminal import marker
from handoff.models import HandoffRecord
from host.importers.live import follow_step
from host.models import Session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = "3f1c2a9e-7b4d-4e8a-9c21-5d6f0e1b2a34"
SUCCESSOR = "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d"


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


def test_two_tabs_move_to_the_successor_the_marker_claimed(
    make_user: Callable[..., Any], open_page: Callable[..., Any], tmp_path: Path, settings: Any
) -> None:
    settings.AGENT_HOOKS_BRIEF_DIR = tmp_path / "briefs"
    ada = make_user("ada")
    log = tmp_path / f"{SOURCE}.jsonl"
    for index in range(4):
        write_turn(log, SOURCE, f"Step {index} of the work.", index)
    off_loop(lambda: follow_step(log, ada, settle=True))
    source = Session.objects.get(owner=ada, external_id=SOURCE)
    outcome = off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    record = HandoffRecord.objects.get(source=source)
    assert record.phase == Phase.PREPARED, outcome.detail
    first, second = open_page(ada, source), open_page(ada, source)

    fresh = tmp_path / f"{SUCCESSOR}.jsonl"
    write_turn(fresh, SUCCESSOR, f"Continue the handed-off work {marker(record.pk)}.", 0)
    off_loop(lambda: follow_step(fresh, ada, settle=True))
    record.refresh_from_db()
    assert record.phase == Phase.STARTED, record.error
    successor = Session.objects.get(owner=ada, external_id=SUCCESSOR)
    for page in (first, second):
        page.wait_for_url(f"**/s/{successor.pk}/")
