"""Blockers (docs/spec.md, Deferral)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ACTIVE_TEAM_ROSTER = "active-team-roster"
PENDING_INBOX = "pending-inbox"
CUSTOM_PERMISSIONS = "custom-permissions-require-manual-transfer"
CUSTOM_PRESET = "custom"
"""The permission preset that defers automatic attempts (``CUSTOM_PERMISSIONS``)."""


def activity(kind: str) -> str:
    """Return the blocker name for something in flight of ``kind`` (``activity:KIND``)."""
    return f"activity:{kind}"


def owned_agent(agent_id: str) -> str:
    """Return the blocker name for a live subagent of the main (``owned-agent:ID``)."""
    return f"owned-agent:{agent_id}"


@dataclass(frozen=True)
class BlockerFacts:
    """What the host reports about a main at this moment.

    ``activities``: kinds in flight (running turn, compaction, queued or running job);
    ``live_owned_agents``: ids of subagents still live (finished, disposed, archived excluded);
    ``team_members``: members of the team the main leads (0 when it leads none);
    ``pending_inbox``: messages queued for the next turn or step and not yet taken.
    """

    activities: Sequence[str] = ()
    live_owned_agents: Sequence[str] = ()
    team_members: int = 0
    pending_inbox: int = 0
    permission_preset: str = "default"


def find_blockers(facts: BlockerFacts, *, manual: bool) -> list[str]:
    """Return the blockers in their table's order; empty when the attempt may proceed.

    A custom permission preset defers automatic attempts only: ``now`` is the human decision
    the specification asks for (docs/spec.md, Deferral, states both rules).
    """
    found = [activity(kind) for kind in dict.fromkeys(facts.activities)]
    found += [owned_agent(agent_id) for agent_id in facts.live_owned_agents]
    if facts.team_members > 1:
        found.append(ACTIVE_TEAM_ROSTER)
    if facts.pending_inbox > 0:
        found.append(PENDING_INBOX)
    if facts.permission_preset == CUSTOM_PRESET and not manual:
        found.append(CUSTOM_PERMISSIONS)
    return found
