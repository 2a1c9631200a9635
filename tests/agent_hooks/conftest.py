"""A scripted runtime for the hook route's tests: it posts the documented payload fixtures
(``fixtures/``) to the route as the hook command does, while a writer appends real-shaped log
lines to a temporary session log (as ``tests/host/test_follow_sessions.py`` appends lines).

``Runtime.hook(name, ...)`` posts ``fixtures/<runtime>/<name>.json`` with the session's id,
log and folder swapped in, a fresh ``X-Hook-Delivery`` and the runtime process's
``X-Hook-Process``, and, like the command, acknowledges an answer that asks for it (``late``:
the answer came after the command's deadline, so no acknowledgement). ``ClaudeLog`` and
``CodexLog`` write the lines each runtime writes for a prompt and its answer.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from hook_scenarios import CWD, fixture

from handoff import services
from host.auth import issue_token


@dataclass
class ClaudeLog:
    """A Claude Code 2.1 session log (``<session id>.jsonl``) written line by line."""

    path: Path
    session_id: str
    count: int = 0

    def _line(self, record: dict[str, Any]) -> None:
        self.count += 1
        base = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": "2.1.42",
            "uuid": f"{self.session_id[:8]}-{self.count:04d}",
            "timestamp": f"2026-12-04T18:{self.count // 60:02d}:{self.count % 60:02d}.000Z",
        }
        with self.path.open("a") as handle:
            handle.write(json.dumps({**base, **record}) + "\n")

    def prompt(self, text: str) -> None:
        """The user's prompt."""
        self._line({"type": "user", "message": {"role": "user", "content": text}})

    def answer(self, text: str, *, context: int) -> None:
        """The model's answer to a prompt of ``context`` tokens (cache read mostly)."""
        usage = {
            "input_tokens": 3,
            "cache_creation_input_tokens": 200,
            "cache_read_input_tokens": context - 203,
            "output_tokens": 120,
        }
        self._line(
            {
                "type": "assistant",
                "requestId": f"req_{self.session_id[:8]}_{self.count}",
                "message": {
                    "id": f"msg_{self.session_id[:8]}_{self.count}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": usage,
                },
            }
        )

    def turns(self, count: int, *, context: int) -> None:
        """``count`` prompts and answers, the last one at ``context`` tokens."""
        for index in range(count):
            self.prompt(f"Step {self.count} of the work.")
            self.answer("Done.", context=context * (index + 1) // count)


@dataclass
class CodexLog:
    """A Codex CLI rollout (``rollout-<time>-<thread id>.jsonl``) written line by line: its
    ``session_meta`` at once (Codex writes it when the session starts)."""

    path: Path
    session_id: str
    totals: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._line(
            "session_meta",
            {"id": self.session_id, "timestamp": "2026-12-04T18:00:00.000Z", "cwd": CWD,
             "originator": "codex_cli_rs", "cli_version": "0.145.0", "instructions": None},
        )  # fmt: skip

    def _line(self, kind: str, payload: dict[str, Any]) -> None:
        line = {"timestamp": "2026-12-04T18:00:00.000Z", "type": kind, "payload": payload}
        with self.path.open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    def prompt(self, text: str) -> None:
        """The turn's context and the user's prompt."""
        self._line("turn_context", {"cwd": CWD, "approval_policy": "on-request",
                                    "sandbox_policy": {"mode": "workspace-write"},
                                    "model": "gpt-5.2-codex", "effort": "medium",
                                    "summary": "auto"})  # fmt: skip
        self._line("event_msg", {"type": "user_message", "message": text, "images": []})
        self._line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )

    def answer(self, text: str, *, context: int) -> None:
        """The model's answer to a prompt of ``context`` tokens."""
        self._line(
            "response_item",
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": text}]},
        )  # fmt: skip
        last = {"input_tokens": context, "cached_input_tokens": context // 2,
                "output_tokens": 100, "reasoning_output_tokens": 0,
                "total_tokens": context + 100}  # fmt: skip
        self.totals = {name: self.totals.get(name, 0) + value for name, value in last.items()}
        self._line(
            "event_msg",
            {"type": "token_count", "rate_limits": None,
             "info": {"total_token_usage": self.totals, "last_token_usage": last,
                      "model_context_window": 272000}},
        )  # fmt: skip

    def turns(self, count: int, *, context: int) -> None:
        """``count`` prompts and answers, the last one at ``context`` tokens."""
        for index in range(count):
            self.prompt(f"Step {index} of the work.")
            self.answer("Done.", context=context * (index + 1) // count)


@dataclass
class Runtime:
    """One scripted runtime process (``process``) of one user, talking to the route."""

    client: Client
    runtime: str
    folder: Path
    process: str = "4242"
    sent: list[uuid.UUID] = field(default_factory=list)

    def log(self, session_id: str) -> Any:
        """The session's log under the runtime's folder (``ClaudeLog`` or ``CodexLog``)."""
        if self.runtime == "codex":
            name = f"rollout-2026-12-04T18-00-00-{session_id}.jsonl"
            return CodexLog(self.folder / name, session_id)
        return ClaudeLog(self.folder / f"{session_id}.jsonl", session_id)

    def post(
        self, name: str, session: Any, delivery: uuid.UUID | None = None, **fields: Any
    ) -> dict[str, Any]:
        """Post the fixture ``name`` for ``session`` (``fields`` override the payload's) and
        return the route's answer."""
        payload = fixture(self.runtime, name) | {
            "session_id": session.session_id,
            "transcript_path": str(session.path),
            "cwd": CWD,
        }
        delivery = delivery or uuid.uuid4()
        self.sent.append(delivery)
        response = self.client.post(
            f"/api/hooks/{self.runtime}",
            payload | fields,
            content_type="application/json",
            HTTP_X_HOOK_DELIVERY=str(delivery),
            HTTP_X_HOOK_PROCESS=self.process,
        )
        assert response.status_code == 200, response.content
        answer: dict[str, Any] = response.json()
        return answer

    def hook(self, name: str, session: Any, *, late: bool = False, **fields: Any) -> Any:
        """Run the hook as the command does and return the output it prints (None: nothing);
        ``late``: the answer came after the deadline, so nothing is printed or acknowledged."""
        answer = self.post(name, session, **fields)
        if late:
            return None
        if answer["ack"]:
            acked = self.client.post(
                f"/api/hooks/{self.runtime}/ack",
                {"delivery": str(self.sent[-1])},
                content_type="application/json",
            )
            assert acked.status_code == 204, acked.content
        return answer["output"]


@pytest.fixture
def hooked_user(django_user_model: Any) -> User:
    """The user whose terminal sessions the route sees."""
    user: User = django_user_model.objects.create_user("terminal")
    return user


def scripted(
    runtime: str, user: User, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> Runtime:
    """A scripted ``runtime`` writing its logs where it writes them (``CLAUDE_CONFIG_DIR`` and
    ``CODEX_HOME`` under ``tmp_path``), the briefs' files there too, and the trigger at 50 000
    tokens after 4 turns."""
    settings.AGENT_HOOKS_BRIEF_DIR = tmp_path / "briefs"
    services.settings_store().save(handoff_tokens=50_000, handoff_min_turns=4)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    logs = "projects/-home-user-my-project" if runtime == "claude" else "sessions/2026/12/04"
    folder = tmp_path / runtime / logs
    folder.mkdir(parents=True)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user)}")
    return Runtime(client, runtime, folder)


@pytest.fixture
def claude(
    hooked_user: User,
    tmp_path: Path,
    settings: Any,
    immediate_tasks: None,
    monkeypatch: pytest.MonkeyPatch,
) -> Runtime:
    """A scripted Claude Code (``scripted``)."""
    return scripted("claude", hooked_user, tmp_path, settings, monkeypatch)


@pytest.fixture
def codex(
    hooked_user: User,
    tmp_path: Path,
    settings: Any,
    immediate_tasks: None,
    monkeypatch: pytest.MonkeyPatch,
) -> Runtime:
    """A scripted Codex CLI (``scripted``)."""
    return scripted("codex", hooked_user, tmp_path, settings, monkeypatch)
