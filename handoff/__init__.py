"""Main-session handoff in a Django host (docs/spec.md states its rules).

``handoff.core`` holds the decision logic in plain Python; the Django modules around it store
records, run the transaction and reach the host only through ``handoff.services``.

The public API a host uses is named here (``__all__``) and imported from this package:
``from handoff import act, SessionController``. Each name is resolved when it is first read
(PEP 562 ``__getattr__``, the way ``django.tasks`` hands out its backends lazily), so importing
the package while Django loads its apps imports no model and no setting. Where each lives:

- ``handoff.operations``: ``act`` and ``Action`` (the one table of what a surface may ask),
  ``enable``, ``disable``, ``request_now``, ``run_attempt``, ``commit_review``,
  ``discard_review``, ``owned_session``, ``owned_session_ids``;
- ``handoff.services``: the protocols a host implements (``HostSession``, ``SessionController``)
  and ``register`` / ``unregister`` of a service at run time;
- ``handoff.session_model``: ``get_session_model``, ``session_key`` (an id as the session
  model's primary key reads it), ``session_path_converter`` (its URL converter), ``SessionId``;
- ``handoff.conf``: ``session_url`` (the host's page of a session);
- ``handoff.exceptions``: ``HandoffError`` and the refusals a host catches
  (``SessionNotFound``, ``NotAMain``, ``ServiceUnavailable``);
- ``handoff.signals``: ``record_changed``, ``redirects_changed``, ``main_switched``,
  ``settings_changed`` and their ``RouteChange``.

Everything else (the store, the attempt's steps, the web layer) is the handoff's own. A name
equal to a module of the package (``status``, ``export``) is not offered: the module would
shadow it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "handoff.operations": (
        "act",
        "Action",
        "enable",
        "disable",
        "request_now",
        "run_attempt",
        "commit_review",
        "discard_review",
        "owned_session",
        "owned_session_ids",
    ),
    "handoff.services": ("HostSession", "SessionController", "register", "unregister"),
    "handoff.session_model": (
        "get_session_model",
        "session_key",
        "session_path_converter",
        "SessionId",
    ),
    "handoff.conf": ("session_url",),
    "handoff.exceptions": ("HandoffError", "SessionNotFound", "NotAMain", "ServiceUnavailable"),
    "handoff.signals": (
        "record_changed",
        "redirects_changed",
        "main_switched",
        "settings_changed",
        "RouteChange",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> Any:
    """Return the public name ``name`` from its module (imported now, once); raises
    ``AttributeError`` for any other name."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'handoff' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
