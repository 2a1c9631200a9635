"""The idle point of a terminal session (docs/spec.md, Deferral; Trigger).

``Stop`` is the runtime's idle point. What is still running there is told to the host as
activities, so the seed's blockers see it: a subagent between ``SubagentStart`` and
``SubagentStop`` (Claude Code; Codex has no subagent events) is ``activity:subagent``, and a
background shell Claude Code's ``Stop`` lists as running is ``activity:job``. Then the
session is evaluated as any conversation is (``handoff.operations.evaluate``: both switches, a
revision not tried yet, no backoff), which enqueues the attempt on the task queue (Django
Tasks), off the request; a blocker defers it (``MainState.deferred``) without a record.
"""

from __future__ import annotations

from typing import Any

from agent_hooks.payload import Hook, repaired
from handoff import operations
from host.external import close_activity, open_activity, sync_jobs
from host.models import ActivityKind, Session


def running_shells(hook: Hook) -> list[str]:
    """The ids of the background shells a Claude Code ``Stop`` lists as running (as text,
    each character the database cannot store replaced by U+FFFD)."""
    tasks: Any = hook.payload.get("background_tasks")
    if not isinstance(tasks, list):
        return []
    return [
        repaired(str(task.get("id")))
        for task in tasks
        if isinstance(task, dict)
        and task.get("type") == "shell"
        and task.get("status") == "running"
    ]


def on_subagent(session: Session, hook: Hook) -> None:
    """``SubagentStart`` opens the subagent's activity, ``SubagentStop`` ends it."""
    agent = hook.text("agent_id") or "subagent"
    if hook.event == "SubagentStart":
        open_activity(session, ActivityKind.SUBAGENT, agent)
    else:
        close_activity(session, agent)


def on_stop(session: Session, hook: Hook) -> bool:
    """At ``Stop``: the shells still running become the session's jobs, the session's kept
    digest folds in what it logged (as a conversation's idle does: the summary then reads only
    what came since), and the session is evaluated; return whether an attempt was enqueued.
    The host's own compaction is never run on it: its runtime compacts it."""
    sync_jobs(session, running_shells(hook))
    operations.refresh_digest(session)
    return operations.evaluate(session.pk)
