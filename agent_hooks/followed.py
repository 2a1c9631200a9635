"""Sessions the follower imports, as the hand-off without hooks sees them (docs/design.md,
Handing off a terminal session through its hooks: without hooks).

``host.signals.log_followed`` tells of each main session a ``follow_sessions`` step (or a
hook's catch-up) stored messages in: a session whose first user record carries a waiting
record's marker claims it (``claim.on_logged_marker``: the new-terminal command run in a
terminal without the product's hooks), and a committed successor moves to ``started`` once
its first turn is in its log (``claim.started``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from agent_hooks import claim
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.models import Session


def on_log_followed(sender: Any, session: Session, **kwargs: Any) -> None:
    """``log_followed`` receiver: claim by the marker in the log, then ``started``. One query
    while no brief of the owner waits and no record waits for this session's first turn."""
    concerned = HandoffRecord.objects.filter(
        Q(phase=Phase.PREPARED, source__owner_id=session.owner_id)
        | Q(phase=Phase.COMMITTED, target_id=session.pk)
    )
    if concerned.exists():
        claim.on_logged_marker(session)
        claim.started(session)
