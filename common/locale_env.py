"""The language a command-line user asked for through the environment, as gettext reads it.

``environment_language`` returns the first language of ``LANGUAGE`` (a colon-separated list),
``LC_ALL``, ``LC_MESSAGES`` or ``LANG``, in that order (gettext's), that the project has
(``settings.LANGUAGES``, Django's fallbacks applied: ``zh_CN.UTF-8`` is ``zh-hans``), or ``None``:
the caller keeps ``LANGUAGE_CODE``. ``C`` and ``POSIX`` name no language.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from django.utils.translation import get_supported_language_variant, to_language

_ORDER = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def _asked(environ: Mapping[str, str]) -> Iterator[str]:
    for name in _ORDER:
        for entry in environ.get(name, "").split(":" if name == "LANGUAGE" else "\n"):
            locale = entry.split(".")[0].split("@")[0]
            if locale and locale not in ("C", "POSIX"):
                yield to_language(locale)


def environment_language(environ: Mapping[str, str] = os.environ) -> str | None:
    """Return the project's language code the environment asks for (module docstring), or
    ``None`` when it asks for none the project has."""
    for code in _asked(environ):
        try:
            return get_supported_language_variant(code)
        except LookupError:
            continue
    return None
