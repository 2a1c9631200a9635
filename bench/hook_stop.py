"""A terminal session's ``Stop`` hook, server side: the route's time with and without a handoff.

A synthetic Claude Code 2.x log of ``MESSAGES`` messages (``bench.synthetic_logs``) is imported
through the route (its first ``Stop``), then a prompt and an answer are appended and timed
``Stop`` deliveries are posted side by side:

- *catch-up*: the session's own switch off: the route imports the two new lines and answers;
- *Stop → prepared*: both switches on, past the trigger: the route imports the lines and the
  attempt runs with the offline summarizer (the immediate task backend, so the time includes
  it) up to ``prepared``.

Each is the median of ``ROUNDS`` runs on a fresh session; the ratio of the two is printed.
Target (the hook flow): Stop → prepared under 1 s on a 5 000-message log. ``run()`` is what
``python -m bench`` calls.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from unittest.mock import patch

from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from bench.synthetic_logs import write_claude_log
from handoff import services, store
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.auth import issue_token
from host.importers import live
from host.models import Session

MESSAGES = 5_000
ROUNDS = 3
IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def _stop(client: Client, path: Path, session_id: str) -> dict[str, Any]:
    payload = {
        "session_id": session_id,
        "transcript_path": str(path),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "background_tasks": [],
    }
    response = client.post(
        "/api/hooks/claude",
        payload,
        content_type="application/json",
        HTTP_X_HOOK_DELIVERY=str(uuid.uuid4()),
        HTTP_X_HOOK_PROCESS="1",
    )
    if response.status_code != 200:
        raise RuntimeError(f"the route answered {response.status_code}: {response.content!r}")
    answer: dict[str, Any] = response.json()
    return answer


def _append_turn(path: Path, session_id: str, index: int, cwd: str) -> None:
    """A prompt and its answer (past any trigger point), as Claude Code writes them."""
    base = {"isSidechain": False, "userType": "external", "cwd": cwd,
            "sessionId": session_id, "version": "2.1.42", "parentUuid": None}  # fmt: skip
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 100,
             "cache_read_input_tokens": 150_000, "output_tokens": 50}  # fmt: skip
    lines = [
        {**base, "type": "user", "uuid": f"bench-p{index}",
         "message": {"role": "user", "content": "Go on with the next step."}},
        {**base, "type": "assistant", "uuid": f"bench-a{index}", "requestId": f"req_b{index}",
         "message": {"id": f"msg_b{index}", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "usage": usage,
                     "content": [{"type": "text", "text": "Done with that step."}]}},
    ]  # fmt: skip
    with path.open("a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def _one(folder: Path, seed: int, *, switched_on: bool) -> float:
    """Import a fresh log, append a turn, and return the time of the timed ``Stop``."""
    user = get_user_model().objects.create_user(f"bench-hook-{seed}-{switched_on}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user)}", HTTP_HOST="localhost")
    path = folder / f"log-{seed}-{switched_on}.jsonl"
    write_claude_log(path, seed, MESSAGES)
    first = json.loads(path.read_text().splitlines()[1])
    session_id, cwd = first["sessionId"], first["cwd"]
    path = path.rename(folder / f"{session_id}.jsonl")
    with patch.object(live, "MAX_PART", 64 * 1024 * 1024):
        _stop(client, path, session_id)  # the first Stop imports the whole log in one step
    session = Session.objects.get(owner=user, external_id=session_id)
    store.update_main_state(session.pk, enabled=switched_on)
    _append_turn(path, session_id, seed, cwd)
    start = time.perf_counter()
    _stop(client, path, session_id)
    took = time.perf_counter() - start
    prepared = HandoffRecord.objects.filter(source_id=session.pk, phase=Phase.PREPARED).exists()
    if prepared != switched_on:
        raise RuntimeError(f"the timed Stop {'did not prepare' if switched_on else 'prepared'}")
    return took


def run() -> None:
    """Print the two medians and their ratio (module docstring). The logs are written where
    Claude Code writes them (``$CLAUDE_CONFIG_DIR/projects``, a scratch folder here): the route
    reads no log outside the runtimes' folders."""
    with (
        override_settings(TASKS=IMMEDIATE),
        tempfile.TemporaryDirectory() as scratch,
        patch.dict(os.environ, {"CLAUDE_CONFIG_DIR": scratch}),
    ):
        services.settings_store().save(auto_handoff=True, handoff_tokens=10_000)
        folder = Path(scratch) / "projects" / "-work-bench"
        folder.mkdir(parents=True)
        catch_up = [_one(folder, 100 + i, switched_on=False) for i in range(ROUNDS)]
        prepared = [_one(folder, 200 + i, switched_on=True) for i in range(ROUNDS)]
    plain, handed = statistics.median(catch_up), statistics.median(prepared)
    print(f"hook Stop on a {MESSAGES}-message Claude Code log (median of {ROUNDS})", flush=True)
    print(f"  catch-up only:     {plain * 1000:7.0f} ms", flush=True)
    print(
        f"  Stop -> prepared:  {handed * 1000:7.0f} ms  ({handed / plain:.1f}x; target < 1 s)",
        flush=True,
    )
