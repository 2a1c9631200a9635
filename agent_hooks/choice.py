"""The user's choice about a brief waiting for a terminal session (docs/spec.md, Review).

The attempt ends ``prepared`` for a session another runtime runs (``handoff.attempt.
wants_review``): the brief may take seconds, so the user learns of it at the first hook
answer after ``prepared``:

- ``Stop``: a ``systemMessage`` with the choice and the new-terminal command (once);
- ``UserPromptSubmit``: the prompt is blocked ONCE with the choice — ``/clear`` continues in a
  fresh session seeded with the brief, the blocked prompt carried over; sending again stays —
  and the blocked prompt is kept on the record (``Choice.blocked_prompt``);
- a prompt sent again after that: the record fails as ``declined`` (an automatic attempt
  waits the backoff: ``handoff.review.decline``) and the prompt goes through.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.utils import timezone

from agent_hooks.models import Choice
from agent_hooks.payload import Hook
from handoff import review
from handoff.core.terminal import new_terminal_command
from handoff.exceptions import NoReviewWaiting
from handoff.models import HandoffRecord
from handoff.terminal_brief import brief_file
from host.models import Session


def choice_of(record: HandoffRecord, session: Session) -> Choice:
    """Return the record's choice, made on first use with the session's runtime and cwd."""
    found, _ = Choice.objects.get_or_create(
        record=record, defaults={"runtime": session.runtime, "cwd": session.cwd}
    )
    return found


def command(record: HandoffRecord, session: Session) -> str:
    """The exact command that opens the successor in a new terminal (its prompt names the
    brief's file, written now)."""
    brief = str(brief_file(record, session.title))
    return new_terminal_command(record.pk, runtime=session.runtime, cwd=session.cwd, brief=brief)


def choice_text(record: HandoffRecord, session: Session) -> str:
    """The choice as the terminal shows it."""
    return (
        "Session Handoff: this session is near its context limit and a brief for a fresh "
        "session is ready. Type /clear to continue in a fresh session seeded with the brief "
        "— your prompt is carried over; send your prompt again to stay here. "
        f"Or open it in a new terminal: {command(record, session)}"
    )


def on_stop(record: HandoffRecord, session: Session) -> dict[str, Any] | None:
    """Stop: the ``systemMessage`` with the choice, the first time only (None after)."""
    choice = choice_of(record, session)
    if choice.told is not None:
        return None
    choice.told = timezone.now()
    choice.save(update_fields=["told"])
    return {"systemMessage": choice_text(record, session)}


def on_prompt(record: HandoffRecord, session: Session, hook: Hook) -> dict[str, Any] | None:
    """UserPromptSubmit: block the first prompt with the choice (keeping it on the record);
    a prompt sent again declines the handoff and goes through (None)."""
    choice = choice_of(record, session)
    if not choice.blocked:
        choice.blocked, choice.blocked_prompt = True, hook.text("prompt")
        choice.told = choice.told or timezone.now()
        choice.save(update_fields=["blocked", "blocked_prompt", "told"])
        return {"decision": "block", "reason": choice_text(record, session)}
    with contextlib.suppress(NoReviewWaiting):  # expired or claimed meanwhile
        review.decline(session.pk)
    return None
