"""What the chat composer does with its text: post a message, or run a slash command.

``/compact`` is the host's own (the fallback compaction, docs/spec.md, Compaction):
it is posted like a message and ``host.intake`` compacts. Any other slash command (``/handoff``,
``/handoff status`` …) is offered to the plugins through ``host.signals.composer_command``; the
host does not know them (it imports no plugin).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.utils.translation import gettext

from host.compaction import COMMAND as COMPACT
from host.intake import InvalidInput, post_message
from host.models import Session
from host.signals import CommandReply, composer_command


@dataclass(frozen=True)
class SubmitResult:
    """What the composer shows after a submit.

    ``kind``: ``posted`` (a message was added), ``forwarded`` (the session is a relay and the
    message went to ``forwarded_to``), ``command`` (a slash command ran) or ``error`` (nothing
    changed). ``html`` is a plugin's rich answer (trusted: rendered from its templates).
    """

    kind: str
    text: str
    html: str = ""
    forwarded_to: Session | None = None


def parse_command(text: str) -> tuple[str, str] | None:
    """Split ``/name argument…`` into (name, argument); None when ``text`` is no command.

    The name and argument are lower-cased, the argument single-spaced (``/Handoff  NOW`` ->
    ("handoff", "now")). Text starting with ``//`` is a message starting with ``/``.
    """
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, rest = text[1:].partition(" ")
    if not name.strip():
        return None
    return name.strip().lower(), " ".join(rest.split()).lower()


def _post(session: Session, content: str, client_id: str) -> SubmitResult:
    try:
        result = post_message(session, content=content, client_id=client_id)
    except InvalidInput as exc:
        return SubmitResult("error", str(exc))
    if result.forwarded_to:
        successor = Session.objects.filter(pk=result.forwarded_to).first()
        name = (successor.title or str(successor.pk)) if successor else result.forwarded_to
        text = gettext("Forwarded to %(name)s") % {"name": name}
        return SubmitResult("forwarded", text, forwarded_to=successor)
    if content == COMPACT:
        return SubmitResult("command", gettext("Compacted: older turns are summarized in place."))
    return SubmitResult("posted", gettext("Sent."))


def run_command(
    session: Session, user: Any, name: str, argument: str, client_id: str
) -> SubmitResult:
    """Run one slash command on ``session`` for ``user``; an unknown command is an error."""
    if f"/{name}" == COMPACT:
        if argument:
            return SubmitResult(
                "error", gettext("%(command)s takes no argument.") % {"command": COMPACT}
            )
        return _post(session, COMPACT, client_id)
    replies = composer_command.send(
        sender=Session, session=session, user=user, command=name, argument=argument
    )
    for _receiver, answer in replies:
        if answer is not None:
            reply = cast(CommandReply, answer)
            return SubmitResult("command" if reply.ok else "error", reply.text, reply.html)
    unknown = gettext("Unknown command /%(name)s. Try /handoff status or %(compact)s.")
    return SubmitResult("error", unknown % {"name": name, "compact": COMPACT})


def submit(session: Session, user: Any, text: str, client_id: str) -> SubmitResult:
    """Handle one composer submit: a slash command, or a user message posted to ``session``.

    A message posted twice with the same ``client_id`` is added once (``host.intake``). Input
    the host refuses comes back as an ``error`` outcome, with nothing changed.
    """
    command = parse_command(text)
    if command is not None:
        return run_command(session, user, *command, client_id=client_id)
    return _post(session, text[1:] if text.startswith("//") else text, client_id)
