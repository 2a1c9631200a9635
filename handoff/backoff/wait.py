"""Backoff after failed automatic attempts (docs/spec.md, Switches), kept on the main's state.

An automatic attempt that fails at summarize, brief validation, prepare or commit — not one
that stopped because the source changed (deferring is preferred to racing) — counts one
failure on its main and sets ``retry_at``: no automatic attempt before it
(``handoff.backoff.rules.delay``: ``settings.HANDOFF_BACKOFF_BASE`` seconds, default 60,
doubling up to ``settings.HANDOFF_BACKOFF_CAP``, default 3 600). The attempt after it runs at
the first idle past ``retry_at``. ``now`` is never held back; ``enable`` and a successful
handoff reset it ("fix the cause, then enable again": docs/spec.md, Recovery). ``handoffTrigger``
itself stays a pure function: the wait is checked beside it (step 3, and the evaluation).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from handoff import conf, store
from handoff.backoff.rules import delay
from handoff.models import MainState


def record_failure(session_id: Any, now: datetime) -> MainState:
    """Count one more automatic failure on the main and set ``retry_at``; return the state.

    One transaction under the main state's lock (a crash leaves the previous count).
    """
    with transaction.atomic():
        state = store.lock_main_state(session_id)
        failures = state.failures + 1
        configured = conf.handoff_settings()
        wait = delay(failures, base=configured.backoff_base, cap=configured.backoff_cap)
        return store.save_main_state(
            state, failures=failures, retry_at=now + timedelta(seconds=wait)
        )


def holds(state: MainState | None, now: datetime) -> str | None:
    """Return why an automatic attempt must wait now, or ``None`` when it may run."""
    if state is None or state.retry_at is None or now >= state.retry_at:
        return None
    return (
        f"backing off after {state.failures} failed automatic attempt(s): the next one may run "
        f"after {state.retry_at.isoformat(timespec='seconds')}"
    )
