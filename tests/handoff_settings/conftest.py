"""Fixtures of the settings card's and the conversation panel's tests: a staff user who may
change the settings, a member who may only read them, and a client signed in as each."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    """A staff user: the settings card is editable for them."""
    return django_user_model.objects.create_user("root", password="pw", is_staff=True)


@pytest.fixture
def member(django_user_model: Any) -> Any:
    """A user who is not staff: the settings card is read-only for them."""
    return django_user_model.objects.create_user("mia", password="pw")


@pytest.fixture
def as_staff(client: Client, staff: Any) -> Client:
    """The test client signed in as ``staff``."""
    client.force_login(staff)
    return client


@pytest.fixture
def as_member(client: Client, member: Any) -> Client:
    """The test client signed in as ``member``."""
    client.force_login(member)
    return client
