"""The offline agent's answer to a brief comes from the handoff (``host.signals.offline_reply``:
the host does not parse briefs)."""

from __future__ import annotations

from handoff.core.acknowledgement import acknowledgement
from handoff.core.brief import render_brief

BRIEF = {
    "goal": "Finish the importer.",
    "decisions": [],
    "constraints": [],
    "artifacts": [],
    "verified": [],
    "pending": ["docs"],
    "next_steps": ["Fix the Codex reader.", "Write the README"],
    "uncertainties": [],
}


def test_a_rendered_brief_is_acknowledged_with_its_goal_and_first_next_step():
    assert acknowledgement(render_brief(BRIEF, source_title="Work")) == (
        "Offline agent: received the handoff brief. Goal: Finish the importer. "
        "I will continue with: Fix the Codex reader."
    )


def test_a_brief_without_goal_or_steps_is_still_acknowledged():
    assert acknowledgement("# Handoff brief\n") == "Offline agent: received the handoff brief."
