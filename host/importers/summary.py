"""The figures an import reports for a session (issue 2 §3, ``import_transcript --json``)."""

from __future__ import annotations

from typing import Any

from host.models import Session
from host.usage import context_tokens, measure, session_usage

EXACT = "exact"
ESTIMATED = "estimated"
UNAVAILABLE = "unavailable"


def token_label(session: Session) -> str:
    """Return the session's token label (seed 003 §5.2, DESIGN.md "Token basis").

    ``exact`` when the four buckets sum above zero, else ``estimated`` when the meter measures
    above zero, else ``unavailable``.
    """
    if session_usage(session).total > 0:
        return EXACT
    return ESTIMATED if measure(session) > 0 else UNAVAILABLE


def import_report(session: Session) -> dict[str, Any]:
    """Return ``{"session", "workspace", "messages", "turns", "compactions", "model", "usage",
    "tokens"}`` for one imported session.

    ``workspace`` is the workspace's path (the cwd) or None; ``usage`` holds the four buckets
    (tokens); ``tokens`` holds ``context`` (prompt size of the latest call), ``cumulative`` (the
    buckets summed) and ``label``.
    """
    usage = session_usage(session)
    return {
        "session": str(session.pk),
        "workspace": session.workspace.path if session.workspace else None,
        "messages": session.messages.count(),
        "turns": session.turns,
        "compactions": session.compactions,
        "model": session.model,
        "usage": {
            "uncached_input": usage.uncached_input,
            "output": usage.output,
            "cache_read": usage.cache_read,
            "cache_write": usage.cache_write,
        },
        "tokens": {
            "context": context_tokens(session),
            "cumulative": usage.total,
            "label": token_label(session),
        },
    }
