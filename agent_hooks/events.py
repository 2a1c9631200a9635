"""What each hook event does, in order (docs/spec.md, The transaction; Forwarding; Review).

Every event first makes the follower catch up on its session's log (``catch_up``), and every
event of a session that claimed a brief settles that claim (``claim.settle``: commit on
evidence, fail without it, ``started`` on the first turn). Then:

- ``SessionStart``: source ``clear`` claims the brief whose source just cleared
  (``claim.on_clear_start``, answered with the brief as added context, acknowledgement asked);
- ``SessionEnd``: a source's ``clear`` is kept for the pairing;
- ``UserPromptSubmit``: a prompt carrying a marker claims its brief (new terminal); into a
  handed-off session it is blocked and forwarded; into a session whose brief waits it is
  blocked once with the choice, declining when sent again; into a successor it carries the
  prompts forwarded meanwhile;
- ``Stop``: the idle point: the waiting brief is told (``systemMessage``), else the session is
  evaluated for an attempt (and told at once when the attempt ended ``prepared`` already);
- ``SubagentStart`` / ``SubagentStop``: the subagent's activity (a blocker while it runs);
- ``PreCompact`` / ``PostCompact`` and anything else: the catch-up only; a compaction is never
  blocked (compaction stays the fallback).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from agent_hooks import choice, claim, idle_point, relays
from agent_hooks.catch_up import catch_up
from agent_hooks.deliveries import Answer
from agent_hooks.models import Delivery
from agent_hooks.payload import Hook
from handoff import review, store
from host.models import Session


def handle(owner: User, hook: Hook, delivery: Delivery) -> Answer:
    """Run the hook's steps and return the route's answer."""
    session = catch_up(owner, hook)
    if hook.event == "SessionStart":
        if hook.text("source") != "clear":
            return Answer()
        output = claim.on_clear_start(owner, hook, delivery)
        return Answer(output, ack=output is not None)
    claim.settle(owner, hook)
    if hook.event == "UserPromptSubmit":
        return Answer(_prompt(owner, session, hook, delivery))
    if session is None:
        return Answer()
    if hook.event == "SessionEnd":
        waiting = review.waiting(session.pk)
        if waiting is not None:
            claim.on_session_end(waiting, choice.choice_of(waiting, session), hook)
    elif hook.event == "Stop":
        return Answer(_stop(session, hook))
    elif hook.event in ("SubagentStart", "SubagentStop"):
        idle_point.on_subagent(session, hook)
    return Answer()


def _prompt(
    owner: User, session: Session | None, hook: Hook, delivery: Delivery
) -> dict[str, Any] | None:
    claimed = claim.on_marker(owner, hook, delivery)
    if claimed is not None or session is None:
        return claimed
    if store.redirect_of(session.pk) is not None:
        return relays.forward(session, hook, delivery)
    waiting = review.waiting(session.pk)
    if waiting is not None:
        return choice.on_prompt(waiting, session, hook)
    return relays.deliver(session, hook, delivery)


def _stop(session: Session, hook: Hook) -> dict[str, Any] | None:
    if store.redirect_of(session.pk) is not None:
        return None
    waiting = review.waiting(session.pk)
    if waiting is None and idle_point.on_stop(session, hook):
        waiting = review.waiting(session.pk)
    return choice.on_stop(waiting, session) if waiting is not None else None
