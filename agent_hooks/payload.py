"""A hook delivery as the route reads it (Claude Code 2.1 hooks reference; Codex CLI 0.145+).

Every payload names ``hook_event_name``, ``session_id`` and, mostly, ``transcript_path`` and
``cwd``; the rest depends on the event (``source`` of SessionStart, ``reason`` of SessionEnd,
``prompt`` of UserPromptSubmit, ``agent_id`` of SubagentStart/Stop, ``background_tasks`` of
Claude Code's Stop). ``Hook`` keeps what the steps read; a payload without the two required
fields, or with one the database cannot store (a NUL character or a lone surrogate; an event
name over ``EVENT_LENGTH``), is refused (``InvalidHook``) and changes nothing. Any other text
read from the payload (a prompt, a path) has such characters replaced by U+FFFD, as the
importers repair a transcript line (common/text.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from common.text import UNSTORABLE, first_unstorable

RUNTIMES = ("claude", "codex")
EVENT_LENGTH = 40
"""The longest ``hook_event_name`` taken (``Delivery.event``); the runtimes' are far shorter."""
CWD_LENGTH = 1024
"""The longest ``cwd`` kept (``Choice.cwd``): a longer one is cut there, on every event alike,
so the folders of two events still compare equal."""
REPLACEMENT = "\ufffd"


class InvalidHook(ValueError):
    """The payload is not a hook delivery the route takes; the message says which field."""


@dataclass(frozen=True)
class Hook:
    """One delivery: ``runtime`` (claude | codex), ``event`` (the payload's
    ``hook_event_name``), ``session_key`` (the runtime's session id), ``transcript`` (its log's
    path, "" when not given), ``cwd``, ``process`` (``X-Hook-Process``: the runtime process
    that ran the hook, "" when not sent), ``delivery`` (``X-Hook-Delivery``) and the payload."""

    runtime: str
    event: str
    session_key: str
    delivery: UUID
    transcript: str = ""
    cwd: str = ""
    process: str = ""
    payload: dict[str, Any] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """Return the payload's field ``name`` as text ("" when missing or not text), each
        character the database cannot store replaced by U+FFFD."""
        return repaired(self.payload.get(name))


def repaired(value: Any) -> str:
    """Return ``value`` when it is text, with NUL characters and lone surrogates replaced by
    U+FFFD; "" when it is not text."""
    return UNSTORABLE.sub(REPLACEMENT, value) if isinstance(value, str) else ""


def parse(runtime: str, payload: Any, *, delivery: str, process: str) -> Hook:
    """Return the ``Hook`` of a delivery; raise ``InvalidHook`` for an unknown runtime, a body
    that is not an object, a missing ``hook_event_name`` or ``session_id``, or a delivery id
    that is not a UUID, a NUL character or a lone surrogate in either field, or an event name
    over ``EVENT_LENGTH`` characters."""
    if runtime not in RUNTIMES:
        raise InvalidHook(f"runtime: one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if not isinstance(payload, dict):
        raise InvalidHook("body: a JSON object")
    for name in ("hook_event_name", "session_id"):
        if not isinstance(payload.get(name), str) or not payload[name]:
            raise InvalidHook(f"{name}: Field required")
        found = first_unstorable(payload[name])
        if found is not None:
            raise InvalidHook(f"{name}: {found} cannot be stored")
    if len(payload["hook_event_name"]) > EVENT_LENGTH:
        raise InvalidHook(f"hook_event_name: at most {EVENT_LENGTH} characters")
    try:
        delivery_id = UUID(delivery)
    except ValueError as exc:
        raise InvalidHook("X-Hook-Delivery: a UUID") from exc
    return Hook(
        runtime=runtime,
        event=payload["hook_event_name"],
        session_key=payload["session_id"][:200],
        delivery=delivery_id,
        transcript=repaired(payload.get("transcript_path")),
        cwd=repaired(payload.get("cwd"))[:CWD_LENGTH],
        process=repaired(process)[:40],
        payload=payload,
    )
