"""The host's session model the handoff's tables point at: ``settings.HANDOFF_SESSION_MODEL``.

Like ``AUTH_USER_MODEL``: ``"app_label.ModelName"``; it has no default (the handoff names no
host): unset, the system check ``handoff.E001`` says so and ``get_session_model`` raises
``ImproperlyConfigured`` naming it. **Set it once, before the first ``migrate``**: the
handoff's migrations create their foreign keys to whatever it names then
(``to=session_model_name()``, and each depends on the first migration of that app through
``migrations.swappable_dependency``); changing it later leaves those keys pointing at the old
table, exactly as Django warns for ``AUTH_USER_MODEL``. (The ``swapper`` package was not taken:
it expects the default model inside the swappable app, ``handoff.Session``, a table of its own,
while the session model is the host's.)

What the model must have (checked at start-up by ``check_session_model``, ``handoff.E001``):

- an installed Django model with a primary key of any type (the reference host's is a UUID, the
  plain host's in the tests a UUID or an integer): ids cross the handoff's URLs, API, command
  and tables as that field reads them (``session_key``, ``session_path_converter``);
- ``title``: a text field (the admin searches and orders records by it);
- ``owner``: a foreign key to ``AUTH_USER_MODEL`` (the admin names the successor's owner).

Everything else the handoff reads of a session — owner, parent, cwd, presets, status, revision,
turns, compactions, window — it reads from the objects the host's ``SessionController`` returns,
through the ``handoff.services.HostSession`` protocol (properties are fine), and whose sessions
a user owns only through ``SessionController.owned_by``; it never filters on the model's own
columns (``source__owner`` …).
"""

from __future__ import annotations

from typing import Any, TypeAlias
from uuid import UUID

from django.apps import apps
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured, ValidationError
from django.db import models

from handoff.conf import handoff_settings

SessionId: TypeAlias = "str | int | UUID"
"""A session id as the handoff passes it: its text, or the key as the model's pk reads it."""

SETTING = "HANDOFF_SESSION_MODEL"
REQUIRED_FIELDS = ("title", "owner")
# The path converter of each kind of primary key (``Field.get_internal_type()``); any other
# kind is matched as ``str`` and read by the field itself (``session_key``).
CONVERTERS = {
    "UUIDField": "uuid",
    "AutoField": "int",
    "BigAutoField": "int",
    "SmallAutoField": "int",
    "IntegerField": "int",
    "BigIntegerField": "int",
    "SmallIntegerField": "int",
    "PositiveIntegerField": "int",
    "PositiveBigIntegerField": "int",
    "PositiveSmallIntegerField": "int",
}


def session_model_name() -> str:
    """Return ``settings.HANDOFF_SESSION_MODEL`` (``"app_label.ModelName"``), as the handoff's
    foreign keys name their target. Raises ``ImproperlyConfigured`` naming the setting when it
    is unset or malformed."""
    name = handoff_settings().session_model
    if name is None:
        raise ImproperlyConfigured(
            f"{SETTING} is not set: name the host's session model ('app_label.ModelName')"
        )
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


def session_key(session_id: Any) -> Any:
    """Return ``session_id`` (the id as text, or already as the key) as the session model's
    primary key reads it (``pk.to_python``): a ``UUID`` on a host with UUID keys, an ``int`` on
    one with integer keys. Raises ``ValueError`` for an id that field refuses (malformed)."""
    try:
        return get_session_model()._meta.pk.to_python(session_id)
    except ValidationError as exc:
        raise ValueError(f"{session_id!r} is not a session id") from exc


def session_path_converter() -> str:
    """Return the name of the URL path converter of a session id: ``"uuid"`` or ``"int"`` for
    those kinds of primary key, else ``"str"`` (``CONVERTERS``); the handoff's URLs and a host's
    own take a session id as ``f"<{session_path_converter()}:session_id>"``."""
    field = get_session_model()._meta.pk
    return CONVERTERS.get(field.get_internal_type(), "str") if field is not None else "str"


def session_key_type() -> type:
    """Return the Python type of a session id as its path converter gives it (``UUID``, ``int``
    or ``str``): what the JSON API declares its session ids as (``handoff.api``)."""
    return {"uuid": UUID, "int": int}.get(session_path_converter(), str)


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
