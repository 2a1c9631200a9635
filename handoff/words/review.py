"""What a brief waiting for review asks of the user (docs/spec.md, Review), in the active
language: the composer's notice and ``manage.py handoff``'s status say the same.

A session of this product: read the brief, then commit or discard it. A terminal session (Claude
Code, Codex) is not committed here: with the product's hooks, ``/clear`` in its terminal or the
new-terminal command; without them, that command (its marker claims the brief) or discard.
"""

from __future__ import annotations

from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from handoff import services
from handoff.services import PRODUCT_RUNTIME

REVIEW_HERE = _("read its brief, then commit or discard it")
REVIEW_BY_CLEAR = _("type /clear in its terminal, or open the successor in a new terminal")
REVIEW_IN_NEW_TERMINAL = _("open the successor in a new terminal with its command, or discard it")


def hooked(session: Any) -> bool:
    """Whether ``session`` runs in another runtime that runs the product's hooks for it
    (``SessionObservation.hooked``; False for a session of this product, an unknown one, or
    without a session controller)."""
    if session.runtime == PRODUCT_RUNTIME:
        return False
    controller = services.session_controller()
    observed = controller.observe(str(session.pk)) if controller is not None else None
    return observed is not None and observed.hooked


def review_notice(session: Any) -> Promise:
    """What the user is asked to do with ``session``'s brief waiting for review: commit or
    discard it here (a session of this product); for a terminal session with the product's
    hooks, ``/clear`` in its terminal or the new-terminal command; without them, that command
    (the marker in the new log claims the brief: ``agent_hooks.claim``) or discard."""
    if session.runtime == PRODUCT_RUNTIME:
        return REVIEW_HERE
    return REVIEW_BY_CLEAR if hooked(session) else REVIEW_IN_NEW_TERMINAL
