"""The host's session model the handoff's tables point at: ``settings.HANDOFF_SESSION_MODEL``.

Like ``AUTH_USER_MODEL``: ``"app_label.ModelName"``, default ``"host.Session"`` (the reference
host). **Set it once, before the first ``migrate``**: the handoff's migrations create their
foreign keys to whatever it names then (``to=session_model_name()``, and each depends on the
first migration of that app through ``migrations.swappable_dependency``); changing it later
leaves those keys pointing at the old table, exactly as Django warns for ``AUTH_USER_MODEL``.
(The ``swapper`` package was not taken: it expects the default model inside the swappable app,
``handoff.Session``, a table of its own, while this default is the host's model.)

What the model must have (checked at start-up by ``check_session_model``, ``handoff.E001``):

- an installed Django model with a primary key of any type (the reference host's is a UUID);
- ``title``: a text field (the admin searches and orders records by it);
- ``owner``: a foreign key to ``AUTH_USER_MODEL`` (the admin names the successor's owner).

Everything else the handoff reads of a session — owner, parent, cwd, presets, status, revision,
turns, compactions, window — it reads from the objects the host's ``SessionController`` returns,
through the ``handoff.services.HostSession`` protocol (properties are fine), and whose sessions
a user owns only through ``SessionController.owned_by``; it never filters on the model's own
columns (``source__owner`` …).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models

from handoff.conf import handoff_settings

SETTING = "HANDOFF_SESSION_MODEL"
REQUIRED_FIELDS = ("title", "owner")


def session_model_name() -> str:
    """Return ``settings.HANDOFF_SESSION_MODEL`` (``"app_label.ModelName"``; default
    ``"host.Session"``), as the handoff's foreign keys name their target."""
    name = handoff_settings().session_model
    if not isinstance(name, str) or name.count(".") != 1:
        raise ImproperlyConfigured(f"{SETTING} must be of the form 'app_label.ModelName': {name!r}")
    return name


def get_session_model() -> type[models.Model]:
    """Return the session model class ``HANDOFF_SESSION_MODEL`` names.

    Raises ``ImproperlyConfigured`` when the setting is malformed or names a model that is not
    installed (as ``django.contrib.auth.get_user_model`` does).
    """
    name = session_model_name()
    try:
        return apps.get_model(name, require_ready=False)
    except LookupError as exc:
        raise ImproperlyConfigured(
            f"{SETTING} refers to model {name!r} that has not been installed"
        ) from exc


def check_session_model(**kwargs: Any) -> list[checks.CheckMessage]:
    """The system check ``handoff.E001``: the session model exists and has the fields above."""
    try:
        model = get_session_model()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="handoff.E001")]
    missing = []
    for field in REQUIRED_FIELDS:
        try:
            model._meta.get_field(field)
        except FieldDoesNotExist:
            missing.append(field)
    if not missing:
        return []
    return [
        checks.Error(
            f"{SETTING} {model._meta.label} lacks the field(s) the handoff needs: "
            + ", ".join(missing),
            hint="See handoff/session_model.py for what a session model must have.",
            obj=model,
            id="handoff.E001",
        )
    ]
