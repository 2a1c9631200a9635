"""How the offline agent acknowledges a brief (``host.signals.offline_reply``): the brief's goal
and its first next step, read from the Markdown ``handoff.core.brief.render_brief`` writes. The
host's offline agent asks its plugins for this answer; it does not read briefs itself."""

from __future__ import annotations

import re

from handoff.core.said import BRIEF_RECEIVED

_GOAL = re.compile(r"^\s*(?:\*\*)?Goal:(?:\*\*)?\s*(?P<goal>.+?)\s*$", re.MULTILINE)
_NEXT_STEPS = re.compile(
    r"^#+\s*Next steps\s*\n(?:\s*\n)*\s*[-*]\s+(?P<step>.+?)\s*$", re.MULTILINE
)


def acknowledgement(brief: str) -> str:
    """The offline agent's answer to ``brief`` (Markdown): ``BRIEF_RECEIVED``, then its goal and
    first next step when it has them ("Goal: … I will continue with: …")."""
    parts = [BRIEF_RECEIVED]
    goal = _GOAL.search(brief)
    if goal:
        parts.append(f"Goal: {goal['goal'].rstrip('.')}.")
    step = _NEXT_STEPS.search(brief)
    if step:
        parts.append(f"I will continue with: {step['step'].rstrip('.')}.")
    return " ".join(parts)


def offline_reply(sender: object, content: str, **kwargs: object) -> str:
    """``host.signals.offline_reply`` receiver: the acknowledgement of the brief ``content``
    (the handoff seeds a successor with the only plugin input the host's log holds)."""
    return acknowledgement(content)
