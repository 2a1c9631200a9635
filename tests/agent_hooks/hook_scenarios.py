"""The scripted scenarios the hook tests share: a Claude Code session switched on, brought
past its threshold to ``prepared``, and ``/clear`` typed in its terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from handoff_support import auto_handoff

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.models import Session

FIXTURES = Path(__file__).parent / "fixtures"
CWD = "/home/user/my-project"


def fixture(runtime: str, name: str) -> dict[str, Any]:
    """The documented payload ``fixtures/<runtime>/<name>.json``."""
    payload: dict[str, Any] = json.loads((FIXTURES / runtime / f"{name}.json").read_text())
    return payload


SOURCE = "3f1c2a9e-7b4d-4e8a-9c21-5d6f0e1b2a34"
SUCCESSOR = "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d"
PROMPT = "Now add the --json option."


def switched_on(runtime: Any, log: Any) -> Session:
    """The session under threshold with both switches on (the hooks seen once)."""
    log.turns(4, context=30_000)
    assert runtime.hook("stop", log) is None
    session = session_of(log.session_id)
    operations.enable(session.pk)
    auto_handoff()
    return session


def session_of(key: str) -> Session:
    """The main session the runtime's session id ``key`` names."""
    return Session.objects.get(external_id=key, parent__isnull=True)


def prepared(claude: Any, key: str = SOURCE) -> tuple[Any, Session, HandoffRecord]:
    """(a) up to ``prepared``: the log of session ``key`` passes the threshold, then Stop."""
    log = claude.log(key)
    session = switched_on(claude, log)
    assert not HandoffRecord.objects.filter(source_id=session.pk).exists()
    log.turns(2, context=60_000)
    told = claude.hook("stop", log)
    record = HandoffRecord.objects.get(source_id=session.pk)
    assert record.phase == Phase.PREPARED
    assert "/clear" in told["systemMessage"]
    assert "[handoff:" in told["systemMessage"]  # the new-terminal command carries the marker
    return log, session, record


def clear(claude: Any, log: Any, *, late: bool = False) -> tuple[Any, Any]:
    """``/clear`` in the terminal: the source's SessionEnd, the new session's SessionStart."""
    assert claude.hook("session_end_clear", log) is None
    successor = claude.log(SUCCESSOR)
    return successor, claude.hook("session_start_clear", successor, late=late)


def goal_of(record: HandoffRecord) -> str:
    """The first 40 characters of the record's brief's goal (what a context must show)."""
    assert record.brief is not None
    return str(record.brief["goal"])[:40]
