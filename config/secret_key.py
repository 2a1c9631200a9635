"""The secret key of an install that was given none: random, generated once, kept in a file.

``make run``, the tests and the command line work from a clean clone with nothing configured,
and still never share a key that is written down anywhere: each checkout generates its own.
A deployment sets ``DJANGO_SECRET_KEY`` instead (the same value on every process and host);
``manage.py check --deploy`` reports a key that came from this file (``host.checks``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key


def load_or_create(path: Path) -> str:
    """Return the key stored in ``path``, first writing a random one (50 characters) if absent.

    Safe when several processes start at once (``make run`` starts three): the key is written
    to a temporary file that is then linked into place, so a reader sees the whole key or no
    file, and a process that loses the race reads the winner's key. The file is mode 0600.
    Raises ``ImproperlyConfigured`` (asking for ``DJANGO_SECRET_KEY``) when the file can be
    neither read nor written, e.g. on a read-only deployment.
    """
    try:
        if not path.exists():
            _create(path)
        return path.read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(
            f"Set DJANGO_SECRET_KEY: no key was given and {path} cannot be kept ({exc})."
        ) from exc


def _create(path: Path) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(get_random_secret_key())
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
