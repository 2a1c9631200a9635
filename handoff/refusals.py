"""What a refused handoff operation says to people, in the active language.

The exceptions (``handoff.exceptions``) keep their English messages for the API, the logs and
``manage.py handoff``; the chat, the panel, the review form and the admin's actions show these
sentences instead:
in the conversation's words (its successor's title, not ids), and for a missing host service
the consequence in docs/spec.md, Degradation.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from handoff import services
from handoff.exceptions import (
    AlreadyHandedOff,
    HandoffError,
    InvalidBrief,
    NoReviewWaiting,
    NotAMain,
    ReviewWaiting,
    ServiceUnavailable,
)

# The services whose absence refuses an operation (docs/spec.md, Degradation), as people name them.
SERVICE_WORDS: dict[str, Promise] = {
    services.SESSION_CONTROLLER: _("session controller"),
    services.LLM: _("language model"),
}


def _handed_off(error: AlreadyHandedOff) -> str:
    controller = services.session_controller()
    successor = controller.get(str(error.destination)) if controller is not None else None
    title = (successor.title if successor is not None else "") or gettext("its successor")
    return gettext(
        "This conversation was already handed off to “%(title)s”: what you type here goes "
        "there. /handoff disable stops forwarding."
    ) % {"title": title}


def in_words(error: HandoffError) -> str | None:
    """Return the sentence ``error`` shows to people, or None when it has none of its own
    (the caller shows the error's message then)."""
    if isinstance(error, AlreadyHandedOff):
        return _handed_off(error)
    if isinstance(error, NotAMain):
        return gettext("This is a helper agent's conversation: only main conversations hand off.")
    if isinstance(error, NoReviewWaiting):
        return gettext("No handoff of this conversation is waiting for review.")
    if isinstance(error, ReviewWaiting):
        return gettext(
            "A handoff of this conversation is waiting for review: commit or discard it first."
        )
    if isinstance(error, InvalidBrief):
        # The reason (the brief's rule it breaks, e.g. its 40 000-character cap) stays as the
        # seed's rules word it; the sentence around it is the reader's.
        reason = str(error).removeprefix("the edited brief is refused: ")
        return gettext(
            "The edited brief was not accepted (%(reason)s). Nothing was saved: shorten or "
            "correct it, then commit again."
        ) % {"reason": reason}
    if isinstance(error, ServiceUnavailable):
        return gettext("This server provides no %(service)s: %(consequence)s.") % {
            "service": SERVICE_WORDS.get(error.name, error.name),
            "consequence": gettext(error.consequence),
        }
    return None


def refusal_text(error: HandoffError) -> str:
    """Return what a refusal shows on a page: its sentence, else the error's message."""
    return in_words(error) or str(error)
