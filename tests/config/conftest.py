"""Fixtures of the project-wide tests (settings, API conventions): one user with a session, what
the API works on."""

from __future__ import annotations

from typing import Any

import pytest

from host.models import Session


@pytest.fixture
def session(django_user_model: Any) -> Session:
    """Ada's session in /srv/project (``revision`` 0, no messages)."""
    owner = django_user_model.objects.create_user("ada")
    return Session.objects.create(owner=owner, title="work", cwd="/srv/project")
