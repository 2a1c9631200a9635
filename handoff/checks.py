"""The handoff's system checks of what its host names (docs/spec.md, Degradation).

The handoff names no host: what it reaches of one, the host's settings name. At start-up
(``manage.py check``, ``runserver``, ``migrate``) these say what is missing or broken, instead of
a late error where it is first used:

- ``handoff.W001``: ``HANDOFF_SERVICES`` names no ``session_controller``: handoff is unavailable
  (automation off; every operation refuses with ``ServiceUnavailable``);
- ``handoff.E002``: a ``HANDOFF_SERVICES`` path that does not import;
- ``handoff.W002``: ``HANDOFF_SESSION_URL`` is unset: the pages, the settings card, the admin
  and the follower's events cannot link a session (``handoff.conf.session_url`` raises
  ``ImproperlyConfigured`` where it is used).

``handoff.E001`` (the session model) is ``handoff.session_model.check_session_model``.
"""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.utils.module_loading import import_string

from handoff.conf import SESSION_URL, handoff_settings
from handoff.services import SESSION_CONTROLLER


def check_host_settings(**kwargs: Any) -> list[checks.CheckMessage]:
    """The checks above, in that order; ``[]`` when the host names all it needs."""
    host = handoff_settings()
    named = host.services
    found: list[checks.CheckMessage] = []
    if not named.get(SESSION_CONTROLLER):
        found.append(
            checks.Warning(
                "HANDOFF_SERVICES names no session_controller: handoff is unavailable "
                "(automation off, every operation refused).",
                hint="Point HANDOFF_SERVICES['session_controller'] at the host's controller "
                "(handoff.services.SessionController).",
                id="handoff.W001",
            )
        )
    for name, path in named.items():
        if not isinstance(path, str):
            continue
        try:
            import_string(path)
        except ImportError as exc:
            found.append(
                checks.Error(
                    f"HANDOFF_SERVICES[{name!r}] = {path!r} does not import: {exc}",
                    id="handoff.E002",
                )
            )
    if not host.session_url:
        found.append(
            checks.Warning(
                f"{SESSION_URL} is not set: the handoff's pages cannot link a session.",
                hint="Set it to the URL name of the host's page of a session (its one argument: "
                "the session's id).",
                id="handoff.W002",
            )
        )
    return found
