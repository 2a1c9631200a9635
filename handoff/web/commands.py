"""``/handoff`` in the chat composer, answering ``host.signals.composer_command``.

``/handoff`` and ``/handoff now`` ask for a handoff now (it runs in the background);
``/handoff enable`` / ``/handoff disable`` switch the session's automatic handoff;
``/handoff status`` shows the status report (the same report as everywhere);
``/handoff review`` shows the handoff waiting for review, ``/handoff commit`` commits its brief
as it stands (edits are made in the panel's review form), ``/handoff discard`` discards it;
``/handoff review-on`` / ``/handoff review-off`` choose whether this conversation's handoffs
wait for review.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from handoff import operations, store
from handoff.exceptions import HandoffError
from handoff.operations import Action
from handoff.refusals import in_words
from handoff.web.panel import describe_blocker

COMMAND = "handoff"


@dataclass(frozen=True)
class CommandReply:
    """The answer to ``/handoff``, a plain value the host reads as its ``composer_command``
    answer (its ``text``, ``ok`` and ``html`` attributes): ``text`` for the user; ``ok`` False
    when the action was refused (nothing changed); ``html`` (trusted, rendered from the
    handoff's templates) shows it richly, "" for none."""

    text: str
    ok: bool = True
    html: str = ""


REPLIES: dict[Action, Promise] = {
    Action.NOW: _("Handoff requested: the panel above shows how it goes."),
    Action.ENABLE: _("Automatic handoff enabled for this conversation."),
    Action.DISABLE: _("Automatic handoff disabled for this conversation."),
    Action.STATUS: _("Handoff status"),
    Action.REVIEW: _("A handoff is ready for review"),
    Action.COMMIT: _("Handoff committed: the successor starts from the reviewed brief."),
    Action.DISCARD: _("Handoff discarded: the draft successor was archived."),
    Action.REVIEW_ON: _("Handoffs of this conversation now wait for your review."),
    Action.REVIEW_OFF: _("Handoffs of this conversation start the successor without review."),
}
# The actions whose reply shows the status report.
REPORTED = frozenset({Action.STATUS, Action.REVIEW})
# The actions' names are the command's, in every language: "/handoff [now | enable | …]".
COMMAND_FORM = f"/handoff [{' | '.join(REPLIES)}]"
UNKNOWN = _("Unknown /handoff action “%(action)s”. Use %(command)s.")
FORWARDING_STOPPED = _(
    "Forwarding stopped: messages posted here are answered here again, and automatic handoff "
    "is off for this conversation."
)


def refusal(action: str, error: HandoffError) -> str:
    """The sentence a refused ``/handoff`` shows in the chat (``refusals.in_words``), else the
    error's own message after the command."""
    return in_words(error) or f"/handoff {action}: {error}"


def handoff_command(
    sender: Any, *, session: Any, user: Any, command: str, argument: str, **kwargs: Any
) -> CommandReply | None:
    """Run ``/handoff [argument]`` on ``session``; None for any other command.

    A refusal (e.g. a subagent, a missing session controller) is a reply with ``ok=False`` and
    the error's message; the operation changed nothing then.
    """
    if command != COMMAND:
        return None
    action = argument or Action.NOW
    if action not in REPLIES:
        unknown = str(UNKNOWN) % {"action": argument, "command": COMMAND_FORM}
        return CommandReply(unknown, ok=False)
    message = str(REPLIES[Action(action)])
    if action == Action.DISABLE and store.redirect_of(str(session.pk)) is not None:
        message = str(FORWARDING_STOPPED)
    try:
        report = operations.act(action, session.pk)
    except HandoffError as exc:
        return CommandReply(refusal(action, exc), ok=False)
    if action not in REPORTED:
        return CommandReply(message)
    html = render_to_string(
        "handoff/_status_report.html",
        {
            "report": report,
            "title": message,
            "deferred": [describe_blocker(b) for b in report["deferred"]],
        },
    )
    return CommandReply(message, html=html)
