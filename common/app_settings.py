"""An app's settings as one typed object: each field a Django setting, with its default.

An app describes its settings once, as a frozen dataclass whose fields carry the defaults a host
that sets none of them gets (as ``ninja.conf`` does for django-ninja; docs/operations.md,
Settings of the apps), and reads them with ``read``. The object is built from
``django.conf.settings`` at each call, so ``override_settings`` and pytest-django's ``settings``
fixture apply to the next read; it is a few attribute look-ups, cheaper than caching and
forgetting on ``setting_changed``.

The setting a field reads is ``prefix`` + the field's name in capitals, or the name its
metadata gives (``field(metadata={"setting": "NAME"})``) for one outside the app's prefix. A
field typed ``int`` or ``float`` converts the host's value (``"60"`` from the environment is 60).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Settings = TypeVar("Settings", bound="DataclassInstance")

_CONVERTED = (int, float)


@functools.cache
def _fields(cls: type[DataclassInstance], prefix: str) -> tuple[tuple[str, str, Any], ...]:
    """Return ``(field, setting, converter or None)`` for each field of ``cls``."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (
            field.name,
            field.metadata.get("setting", prefix + field.name.upper()),
            hints[field.name] if hints[field.name] in _CONVERTED else None,
        )
        for field in dataclasses.fields(cls)
    )


def read(cls: type[Settings], prefix: str) -> Settings:
    """Return ``cls`` (a frozen dataclass of settings) filled from the host's settings now.

    A setting the host does not define keeps the field's default. Raises ``ValueError`` or
    ``TypeError`` when an ``int`` or ``float`` setting is not a number.
    """
    values = {}
    for name, setting, convert in _fields(cls, prefix):
        if hasattr(settings, setting):
            value = getattr(settings, setting)
            values[name] = convert(value) if convert is not None else value
    return cls(**values)
