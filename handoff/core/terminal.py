"""A brief waiting for a terminal session (Claude Code, Codex): the record's marker and the
command that opens the successor in a new terminal (docs/spec.md, Recovery: the marker in the
successor's first user record claims the record; the session id alone is not trusted).

The marker is ``[handoff:<first 12 hex digits of the record id>]``. Claude Code's command
gives the session id ``successor_session_id`` (derived from the record, so every surface shows
the same command) and a prompt carrying the marker and naming the brief's file (a successor
without the product's hooks reads the brief there); Codex's gives the prompt.
"""

from __future__ import annotations

import re
import shlex
import uuid
from uuid import UUID

MARKER = re.compile(r"\[handoff:([0-9a-f]{12})\]")


def marker(record_id: UUID) -> str:
    """Return the record's marker, ``[handoff:<first 12 hex digits of its id>]``."""
    return f"[handoff:{record_id.hex[:12]}]"


def markers_in(text: str) -> list[str]:
    """Return the 12-hex record prefixes of the markers found in ``text``."""
    return MARKER.findall(text or "")


def successor_session_id(record_id: UUID) -> str:
    """The session id the new-terminal command gives Claude Code (a UUID derived from the
    record's)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"session-handoff:{record_id}"))


def new_terminal_command(record_id: UUID, *, runtime: str, cwd: str, brief: str = "") -> str:
    """Return the shell command that opens the successor of ``runtime`` (``claude`` or
    ``codex``) in a new terminal in ``cwd``, its prompt carrying the marker and naming the
    brief's file ``brief`` (a path; "": the prompt asks for the brief the marker names, which
    only the hooks can add)."""
    named = f"the brief in {brief}" if brief else "the brief it names"
    prompt = f"Continue the handed-off work {marker(record_id)}: read {named}."
    where = f"cd {shlex.quote(cwd)} && " if cwd else ""
    if runtime == "claude":
        session = successor_session_id(record_id)
        return f"{where}claude --session-id {session} {shlex.quote(prompt)}"
    return f"{where}codex {shlex.quote(prompt)}"
