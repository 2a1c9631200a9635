"""The figures an import reports for a session (``import_transcript --json``)."""

from __future__ import annotations

from typing import Any

from host.models import Session
from host.usage import CONTEXT, CUMULATIVE, session_usage, token_figure


def import_report(session: Session) -> dict[str, Any]:
    """Return ``{"session", "workspace", "messages", "turns", "compactions", "model", "usage",
    "tokens"}`` for one imported session.

    ``workspace`` is the workspace's path (the cwd) or None; ``usage`` holds the four buckets
    (tokens); ``tokens`` holds ``context`` and ``cumulative``, each ``{"value", "basis",
    "label"}`` as ``handoff status`` shows it on that basis (``host.usage.token_figure``).
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
            basis: token_figure(session, basis).as_dict() for basis in (CONTEXT, CUMULATIVE)
        },
    }
