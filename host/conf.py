"""The host's plugin hooks and optional settings, with the defaults a deployment that sets none
of them gets.

``host_settings()`` returns them as one typed object, ``HostSettings``, read from
``django.conf.settings`` at each call (``common.app_settings``), so ``override_settings``
applies to the next read. The host's other settings (``HOST_TURN_LEASE``, ``HOST_LLM_*``,
``HOST_DEFAULT_MODEL``, ``HOST_CONTEXT_WINDOWS``, ``HOST_TASKS_RUN_IN_CALLER``) have no default
here: ``config/settings.py`` sets each from the environment (docs/operations.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from common.app_settings import read


@dataclass(frozen=True)
class HostSettings:
    """The host's settings that have defaults (name: unit, default — meaning).

    The hooks its pages offer to plugins (``host.templatetags.chat_hooks``):

    - ``HOST_PAGE_PANELS`` (``page_panels``): slot -> template names, default ``{}`` — the
      templates rendered in each slot of the conversation page (``chat_hooks.PAGE_SLOTS``);
    - ``HOST_TITLE_NOTES`` (``title_notes``): dotted paths of ``(title: str) -> str``, default
      none — a note beside a session's title;
    - ``HOST_ENTRY_WORDS`` (``entry_words``): dotted paths of ``(text: str) -> str``, default
      none — a log entry's fixed words in the reader's language;
    - ``HOST_PLUGIN_ENTRY_FILTERS`` (``plugin_entry_filters``): dotted paths of
      ``(html: SafeString, session) -> SafeString``, default none — a plugin message's HTML.

    And:

    - ``HOST_AGENT_PRESETS`` (``agent_presets``): preset name -> ``{"options": {...}, "realm":
      (...)}``, default ``None``: the built-in table ``host.services.AGENT_PRESETS``;
    - ``SECRET_KEY_GENERATED`` (``secret_key_generated``): default ``False`` — set by
      ``config`` when the secret key was generated into the checkout (``host.checks``).
    """

    page_panels: Mapping[str, Sequence[str]] = field(default_factory=dict)
    title_notes: Sequence[str] = ()
    entry_words: Sequence[str] = ()
    plugin_entry_filters: Sequence[str] = ()
    agent_presets: Mapping[str, Mapping[str, Any]] | None = None
    secret_key_generated: bool = field(default=False, metadata={"setting": "SECRET_KEY_GENERATED"})


def host_settings() -> HostSettings:
    """Return the host's settings as the deployment sets them now, each unset one its default."""
    return read(HostSettings, "HOST_")
