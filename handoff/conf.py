"""The handoff's own settings, with the defaults a host that sets none of them gets.

A plugin must not require its host to define its settings (as django-htmx and Channels do, each
is read with its default): ``handoff_settings()`` returns them all as one typed object,
``HandoffSettings``, read from ``django.conf.settings`` at each call (``common.app_settings``).
Its web layer's (``handoff.web``) are here too. Those that name the host have no default (the
handoff names no host): unset, the first use raises ``ImproperlyConfigured`` naming the setting,
and the system checks (``handoff.checks``, ``handoff.session_model``) say so at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from common.app_settings import read

SESSION_URL = "HANDOFF_SESSION_URL"


@dataclass(frozen=True)
class HandoffSettings:
    """The handoff app's settings (name: unit, default — meaning).

    Durations, in seconds:

    - ``HANDOFF_REVIEW_TIMEOUT`` (``review_timeout``): 86 400 (24 h) — how long a brief waits
      for review (docs/spec.md, Review);
    - ``HANDOFF_SUMMARIZE_TIMEOUT`` (``summarize_timeout``): 300 — how long a record may stay
      ``summarizing`` before recovery fails it (docs/spec.md, Recovery);
    - ``HANDOFF_RECOVERY_GRACE`` (``recovery_grace``): 60 — how long a prepared or committed
      record may stay unchanged;
    - ``HANDOFF_BACKOFF_BASE`` (``backoff_base``): 60 and ``HANDOFF_BACKOFF_CAP``
      (``backoff_cap``): 3 600 — the wait after a failed automatic attempt, doubling up to the
      cap (docs/spec.md, Switches).

    The host's seams (``handoff.services``, ``handoff.apps``, ``handoff.session_model``), none
    naming a host by default:

    - ``HANDOFF_SESSION_MODEL`` (``session_model``): ``"app_label.ModelName"``, default ``None``
      — the model the handoff's tables point at; set once, before the first ``migrate``; unset,
      ``handoff.session_model`` raises ``ImproperlyConfigured`` and check ``handoff.E001`` fails;
    - ``HANDOFF_SERVICES`` (``services``): service name -> dotted path of a zero-argument
      factory, a callable, or ``None`` (left out); default ``{}``: every service left out
      (without a ``session_controller`` the handoff is unavailable: check ``handoff.W001``);
    - ``HANDOFF_HOST_SIGNALS`` (``host_signals``): signal name (one of
      ``handoff.apps.HOST_SIGNALS``) -> dotted path of a ``Signal`` or ``None`` (not
      connected); default ``{}``: no hook connected.

    The host's pages (``handoff.web.host_pages``):

    - ``HANDOFF_SESSION_URL`` (``session_url``): a URL name, default ``None`` — the host's page
      of one session, reversed with the session's id as its one argument (``session_url``; the
      admin's "open the successor", the pages, the settings card and the follower's events link
      it); unset, ``session_url`` raises ``ImproperlyConfigured`` and check ``handoff.W002``
      warns;
    - ``HANDOFF_BASE_TEMPLATE`` (``base_template``): a template name, default ``"base.html"`` —
      what the lineage page and the settings card extend (blocks ``title`` and ``body``);
    - ``HANDOFF_MARKDOWN`` (``markdown``): dotted path of ``(text: str) -> SafeString``, default
      ``None`` (escaped paragraphs) — the host's Markdown rendering of a brief.

    And a folder:

    - ``AGENT_HOOKS_BRIEF_DIR`` (``brief_dir``): a path, default ``None``:
      ``<BASE_DIR>/var/briefs`` — where the full brief of a record waiting for a terminal
      session is written (``handoff.terminal_brief``; ``brief_folder``).
    """

    review_timeout: int = 86_400
    summarize_timeout: int = 300
    recovery_grace: int = 60
    backoff_base: int = 60
    backoff_cap: int = 3_600
    session_model: str | None = None
    services: Mapping[str, str | Callable[[], Any] | None] = field(default_factory=dict)
    host_signals: Mapping[str, str | None] = field(default_factory=dict)
    session_url: str | None = None
    base_template: str = "base.html"
    markdown: str | None = None
    brief_dir: str | Path | None = field(
        default=None, metadata={"setting": "AGENT_HOOKS_BRIEF_DIR"}
    )

    def brief_folder(self) -> Path:
        """Return ``brief_dir``, or ``<BASE_DIR>/var/briefs`` when it is not set."""
        if self.brief_dir is None:
            return Path(settings.BASE_DIR) / "var" / "briefs"
        return Path(self.brief_dir)


def handoff_settings() -> HandoffSettings:
    """Return the handoff's settings as the host sets them now, each unset one its default."""
    return read(HandoffSettings, "HANDOFF_")


def session_url(session_id: Any) -> str:
    """Return the path of the host's page of session ``session_id`` (``HANDOFF_SESSION_URL``).

    Raises ``ImproperlyConfigured`` when the setting is unset and ``NoReverseMatch`` when the
    host has no such URL name.
    """
    name = handoff_settings().session_url
    if not name:
        raise ImproperlyConfigured(
            f"{SESSION_URL} is not set: name the URL of the host's page of a session"
        )
    return reverse(name, args=[session_id])
