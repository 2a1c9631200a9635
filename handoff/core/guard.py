"""Step 1, guard (docs/spec.md, The transaction): refuse without a record."""

from __future__ import annotations

from dataclasses import dataclass

NOT_A_MAIN = "not-a-registered-main"
NOT_IDLE = "not-idle"
ARCHIVED = "archived"
SUBAGENT = "subagent"
ALREADY_REDIRECTED = "already-redirected"
OTHER_RUNTIME = "other-runtime"

MESSAGES = {
    NOT_A_MAIN: "the session is not a registered main",
    NOT_IDLE: "the session is not idle",
    ARCHIVED: "the session is archived",
    SUBAGENT: "the session is a subagent",
    ALREADY_REDIRECTED: "the session has already been handed off",
    OTHER_RUNTIME: (
        "the session runs in its own runtime (Claude Code or Codex) without the product's "
        "hooks: it is handed off only when asked (/handoff now); install them (manage.py "
        "agent_hooks install) for automatic handoffs"
    ),
}


@dataclass(frozen=True)
class GuardFacts:
    """The six things the guard checks, as booleans read from the host and the state.

    ``other_runtime``: an automatic attempt on a session a Claude Code or Codex terminal runs
    (a followed log) without the product's hooks: nothing tells the product its idle point or
    the user of the brief (asked for, it is handed off through the new-terminal command).
    """

    registered_main: bool
    idle: bool
    archived: bool
    subagent: bool
    has_redirect: bool
    other_runtime: bool = False


def guard_refusal(facts: GuardFacts) -> str | None:
    """Return the first refusal (a key of ``MESSAGES``) or ``None`` when the guard passes."""
    if facts.subagent:
        return SUBAGENT
    if not facts.registered_main:
        return NOT_A_MAIN
    if facts.archived:
        return ARCHIVED
    if facts.has_redirect:
        return ALREADY_REDIRECTED
    if facts.other_runtime:
        return OTHER_RUNTIME
    if not facts.idle:
        return NOT_IDLE
    return None
