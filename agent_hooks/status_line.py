"""The meter in the terminal: Claude Code's status line (docs/spec.md, Token sources; the context
meter).

``text`` answers the status-line route with one short line: "brief ready: /clear" while a
brief waits for the user's choice, "handed off" once the session is a relay, else the meter
counting down ("hands off at 120k · 14k to go"), "hand-off due" at the trigger point, or ""
when nothing will hand off by itself (a switch is off, no token figure).
"""

from __future__ import annotations

from django.contrib.auth.models import User

from common.text import first_unstorable
from handoff import operations, review, store
from handoff.meter.rules import Verdict
from host.external import by_external_id


def thousands(tokens: int) -> str:
    """Tokens in thousands as the status line writes them (``120k``; ``950`` below 1 000)."""
    return f"{round(tokens / 1000)}k" if tokens >= 1000 else str(tokens)


def text(owner: User, session_key: str) -> str:
    """Return the status line of the owner's session ``session_key`` ("" when unknown, also
    for a key no session can have: one with a NUL character or a lone surrogate)."""
    if first_unstorable(session_key) is not None:
        return ""
    session = by_external_id(owner.pk, session_key)
    if session is None:
        return ""
    if review.waiting(session.pk) is not None:
        return "brief ready: /clear"
    if store.redirect_of(session.pk) is not None:
        return "handed off"
    meter = operations.status(session.pk)["meter"]
    if meter["verdict"] == Verdict.DUE:
        return "hand-off due"
    if meter["verdict"] in (Verdict.TOKENS_TO_GO, Verdict.TURNS_TO_GO):
        point, left = meter["trigger_point"], meter["tokens_to_go"]
        return f"hands off at {thousands(point)} · {thousands(left)} to go"
    return ""
