"""The handoff's own settings, with the defaults a host that sets none of them gets.

A plugin must not require its host to define its settings (as django-htmx and Channels do, each
is read with its default). All are seconds:

- ``HANDOFF_REVIEW_TIMEOUT`` (86 400: 24 h): how long a brief waits for review
  (docs/spec.md, Review);
- ``HANDOFF_SUMMARIZE_TIMEOUT`` (300): how long a record may stay ``summarizing`` before
  recovery fails it (docs/spec.md, Recovery);
- ``HANDOFF_RECOVERY_GRACE`` (60): how long a prepared or committed record may stay unchanged;
- ``HANDOFF_BACKOFF_BASE`` (60) and ``HANDOFF_BACKOFF_CAP`` (3 600): the wait after a failed
  automatic attempt, doubling up to the cap (docs/spec.md, Switches).

and one that is no duration: ``HANDOFF_SESSION_URL`` (no default: the handoff names no host), the
URL name of the host's page of one session, reversed with the session's id as its one argument
(``session_url``; the admin's "open the successor", the pages, the settings card and the
follower's events link it; the other hooks of the pages: ``handoff.web.host_pages``). Unset,
``session_url`` raises ``ImproperlyConfigured`` naming it, and the system check
``handoff.W002`` says so at start-up.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

DEFAULTS = {
    "HANDOFF_REVIEW_TIMEOUT": 86_400,
    "HANDOFF_SUMMARIZE_TIMEOUT": 300,
    "HANDOFF_RECOVERY_GRACE": 60,
    "HANDOFF_BACKOFF_BASE": 60,
    "HANDOFF_BACKOFF_CAP": 3_600,
}


def seconds(name: str) -> int:
    """Return the setting ``name`` (one of ``DEFAULTS``) in seconds: the host's value, else the
    default. Raises ``KeyError`` for a name the handoff does not define."""
    return int(getattr(settings, name, DEFAULTS[name]))


SESSION_URL = "HANDOFF_SESSION_URL"


def session_url(session_id: Any) -> str:
    """Return the path of the host's page of session ``session_id`` (``HANDOFF_SESSION_URL``).

    Raises ``ImproperlyConfigured`` when the setting is unset and ``NoReverseMatch`` when the
    host has no such URL name.
    """
    name = getattr(settings, SESSION_URL, None)
    if not name:
        raise ImproperlyConfigured(
            f"{SESSION_URL} is not set: name the URL of the host's page of a session"
        )
    return reverse(name, args=[session_id])
