"""``/handoff`` in the chat composer (issue 3, §2), answering ``host.signals.composer_command``.

``/handoff`` and ``/handoff now`` ask for a handoff now (it runs in the background);
``/handoff enable`` / ``/handoff disable`` switch the session's automatic handoff;
``/handoff status`` shows the status report (issue 4, §6: the same report as everywhere).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.template.loader import render_to_string

from handoff import operations
from handoff.exceptions import HandoffError
from handoff.status import StatusReport
from handoff.web.panel import describe_blocker
from host.signals import CommandReply

COMMAND = "handoff"
USAGE = "Use /handoff [now | enable | disable | status]."

_ACTIONS: dict[str, tuple[Callable[[Any], StatusReport], str]] = {
    "now": (operations.request_now, "Handoff requested: the brief is being written."),
    "enable": (operations.enable, "Automatic handoff enabled for this conversation."),
    "disable": (operations.disable, "Automatic handoff disabled for this conversation."),
    "status": (operations.status, "Handoff status"),
}


def handoff_command(
    sender: Any, *, session: Any, user: Any, command: str, argument: str, **kwargs: Any
) -> CommandReply | None:
    """Run ``/handoff [argument]`` on ``session``; None for any other command.

    A refusal (e.g. a subagent, a missing session controller) is a reply with ``ok=False`` and
    the error's message; the operation changed nothing then.
    """
    if command != COMMAND:
        return None
    action = argument or "now"
    if action not in _ACTIONS:
        return CommandReply(f"Unknown /handoff action “{argument}”. {USAGE}", ok=False)
    operation, message = _ACTIONS[action]
    try:
        report = operation(session.pk).as_dict()
    except HandoffError as exc:
        return CommandReply(f"/handoff {action}: {exc}", ok=False)
    if action != "status":
        return CommandReply(message)
    html = render_to_string(
        "chat/_status_report.html",
        {
            "report": report,
            "title": message,
            "deferred": [describe_blocker(b) for b in report["deferred"]],
        },
    )
    return CommandReply(message, html=html)
